package ingest

import (
	"slices"
	"testing"
)

func TestDecodeKeepingKnown(t *testing.T) {
	t.Parallel()
	in := `{"ip":"192.0.2.1","source":"s","observed_at":"2026-11-20T10:00:00Z","comment":"from a blog",` +
		`"service":{"port":443,"notes":{"a":[1,{"b":2}]},"probes":[{"request":{"method":"GET","path":"/remote/login","why":"x"},` +
		`"response":{"status":200,"headers":{"Server":"xxxxxxxx-xxxxx","X-A":"1"},"body":"<html>ftnt-fortinet-grid</html>"}}]}}`
	var o Observation
	dropped, err := DecodeKeepingKnown([]byte(in), &o)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/comment", "/service/notes", "/service/probes/0/request/why"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped %v, want %v", dropped, want)
	}
	p := o.Service.Probes[0]
	if o.IP != "192.0.2.1" || o.Service.Port != 443 || p.Request.Path != "/remote/login" || p.Response.Status != 200 ||
		len(p.Response.Headers) != 2 || p.Response.Headers[0].Name != "Server" || p.Response.Headers[1].Name != "X-A" {
		t.Errorf("observation %+v %+v", o, p.Response)
	}
	// Another kind of error is not papered over.
	if _, err := DecodeKeepingKnown([]byte(`{"ip":"192.0.2.1","extra":1,"service":{"port":"x443"}}`), &o); err == nil {
		t.Error("a port that is no number must still fail")
	}
}
