package ingest

import (
	"reflect"
	"strings"
	"testing"
)

// Values written in another JSON type than the format's, where the
// meaning is plain (a port or status as a string, a time as Unix seconds,
// a banner as its text, the probes as one object, SANs and CPEs as one
// string), are read as the format's; the schema accepts them too. What
// cannot be so read is refused naming it, and an unknown member is still
// refused.
func TestNDJSON_RepairedTypes(t *testing.T) {
	t.Parallel()
	const head = `"ip":"192.0.2.1","source":"t",`
	canonical := []string{
		`{` + head + `"observed_at":"2026-11-20T10:00:00Z","service":{"port":22,"transport":"tcp","probes":[{"banner":{"received":{"data":"SSH-2.0-FortiSSH_1.0"}}}]}}`,
		`{` + head + `"observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"response":{"status":200,"headers":[{"name":"Server","value":"xxxxxxxx-xxxxx"}]}}]}}`,
		`{` + head + `"observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"tls":{"subject":{"cn":"FGT60E","o":["Fortinet"]},"sans":["vpn.example.com","192.0.2.1"]}}]}}`,
		`{` + head + `"observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","detected":{"product":"FortiGate","cpe":["cpe:/h:fortinet:fortigate","cpe:/o:fortinet:fortios"]}}}`,
	}
	written := []string{
		`{` + head + `"observed_at":1795168800,"service":{"port":"22","transport":"tcp","probes":[{"banner":"SSH-2.0-FortiSSH_1.0"}]}}`,
		`{` + head + `"observed_at":"2026-11-20T10:00:00Z","service":{"port":" 443 ","transport":"tcp","probes":{"response":{"status":"200 OK","headers":[{"name":"Server","value":"xxxxxxxx-xxxxx"}]}}}}`,
		`{` + head + `"observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"tls":{"subject":{"cn":"FGT60E","o":["Fortinet"]},"sans":"DNS:vpn.example.com, IP Address:192.0.2.1"}}]}}`,
		`{` + head + `"observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","detected":{"product":"FortiGate","cpe":"cpe:/h:fortinet:fortigate cpe:/o:fortinet:fortios"}}}`,
	}
	schema := compileSchema(t)
	for i := range canonical {
		want := runAdapter(t, NDJSON, canonical[i]+"\n", Options{})
		got := runAdapter(t, NDJSON, written[i]+"\n", Options{})
		if len(want.obs) != 1 || len(got.obs) != 1 || len(got.bad) != 0 {
			t.Errorf("%d: canonical %d obs, written %d obs, bad %v", i, len(want.obs), len(got.obs), got.bad)
			continue
		}
		w, g := want.obs[0], got.obs[0]
		if !reflect.DeepEqual(w, g) {
			t.Errorf("%d: read as\n%+v\nwant\n%+v", i, g.Service, w.Service)
		}
		if err := validateJSON(schema, []byte(written[i])); err != nil {
			t.Errorf("%d: the schema refuses a shape the decoder reads: %v", i, err)
		}
	}
	for _, c := range []struct{ line, want string }{
		{`{` + head + `"observed_at":"2026-11-20T10:00:00Z","service":{"port":"twenty-two","transport":"tcp"}}`, "/service/port"},
		{`{` + head + `"observed_at":true,"service":{"port":22,"transport":"tcp"}}`, "/observed_at"},
	} {
		r := runAdapter(t, NDJSON, c.line+"\n", Options{})
		if len(r.obs) != 0 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Err.Error(), c.want) {
			t.Errorf("%s: obs %d, bad %v; want an error naming %q", c.line, len(r.obs), r.bad, c.want)
		}
	}
}
