package secretapi_test

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/api/secretapi/secretapitest"
)

func TestMetrics_Outcomes(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := secretapitest.Start(t, secretapitest.Options{Registerer: reg})
	c := &client{base: s.URL, hc: http.DefaultClient}
	l := c.saveText(t, "x", saveOpts{})
	c.readText(t, l, "wrong")
	c.readText(t, l, "")
	c.readText(t, l, "")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+"/api/get", nil)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "netintel_secrets_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			key := ""
			for _, lp := range m.GetLabel() {
				key += lp.GetValue() + "/"
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{"saveSecret/ok/": 1, "get/wrong key/": 1, "get/ok/": 1, "get/no message/": 1, "get/method/": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	// Nothing else counted; the other series are the ones shown at 0 from
	// start (every endpoint with ok and error).
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("%s = %v, want nothing", k, v)
		}
	}
	for _, zero := range []string{"ss/ok/", "saveFile/error/", "secretStatus/ok/"} {
		if v, ok := got[zero]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0 from start", zero, v, ok)
		}
	}
}
