package ipapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestBatch_Records(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	body := `{"ips":["198.51.100.7","not-an-ip","2001:DB8::5","10.9.9.9","192.0.2.44","203.0.113.10","192.0.2.80"]}`
	cases := []struct {
		tier string
		want []string // per item: ip|found|classes|assets|pro-fields, or "error:<input>"
	}{
		{"free", []string{
			"198.51.100.7|true|vpn,hosting|1|false",
			"error:not-an-ip",
			"2001:db8::5|true|vpn|1|false",
			"10.9.9.9|false||0|false",
			"192.0.2.44|false||0|false", // residential data only: free sees nothing
			"203.0.113.10|true|hosting|0|false",
			"192.0.2.80|true|tor|0|false",
		}},
		{"enterprise", []string{
			"198.51.100.7|true|vpn,hosting|2|true",
			"error:not-an-ip",
			"2001:db8::5|true|vpn|1|true",
			"10.9.9.9|false||0|false",
			"192.0.2.44|true|residential_proxy|0|true",
			"203.0.113.10|true|hosting|0|true",
			"192.0.2.80|true|tor|1|true",
		}},
	}
	for _, tt := range cases {
		t.Run(tt.tier, func(t *testing.T) {
			r := call(t, f.srv.URL, "POST", PathBatch, body, key(tt.tier)...)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			var res struct {
				Results     []map[string]any `json:"results"`
				CreditsUsed int              `json:"credits_used"`
			}
			if err := json.Unmarshal(r.body, &res); err != nil {
				t.Fatal(err)
			}
			if res.CreditsUsed != 7 || r.header.Get("X-Credits-Used") != "7" {
				t.Errorf("credits %d / header %q, want 7", res.CreditsUsed, r.header.Get("X-Credits-Used"))
			}
			var got []string
			for i, it := range res.Results {
				if it["index"] != float64(i) {
					t.Errorf("item %d has index %v", i, it["index"])
				}
				if e, ok := it["error"].(map[string]any); ok {
					if e["code"] != CodeInvalidIP {
						t.Errorf("item %d error %v", i, e)
					}
					got = append(got, "error:"+it["input"].(string))
					continue
				}
				var cls []string
				for _, c := range it["classifications"].([]any) {
					cls = append(cls, c.(string))
				}
				_, pro := it["confidence"]
				got = append(got, fmt.Sprintf("%v|%v|%s|%v|%v", it["ip"], it["found"], strings.Join(cls, ","), it["asset_count"], pro))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("results\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBatch_Validation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	many := func(n int) string {
		ips := make([]string, n)
		for i := range ips {
			ips[i] = fmt.Sprintf(`"10.0.%d.%d"`, i/256, i%256)
		}
		return `{"ips":[` + strings.Join(ips, ",") + `]}`
	}
	cases := []struct {
		name, body string
		status     int
		loc        string
		typ        string
	}{
		{"100 is fine", many(100), 200, "", ""},
		{"101", many(101), 422, "body,ips", "too_long"},
		{"empty list", `{"ips":[]}`, 422, "body,ips", "too_short"},
		{"missing ips", `{"ip":["1.2.3.4"]}`, 422, "body,ips", "missing"},
		{"not an array", `{"ips":"1.2.3.4"}`, 422, "body,ips", "list_type"},
		{"null ips", `{"ips":null}`, 422, "body,ips", "list_type"},
		{"not json", `ips=1.2.3.4`, 422, "body", "json_invalid"},
		{"empty body", ``, 422, "body", "json_invalid"},
		{"trailing garbage", `{"ips":["1.2.3.4"]} x`, 422, "body", "json_invalid"},
		{"array body", `["1.2.3.4"]`, 422, "body", "model_attributes_type"},
		{"number item", `{"ips":["1.2.3.4", 7]}`, 422, "body,ips,1", "string_type"},
		{"huge body", `{"ips":["` + strings.Repeat("a", 70000) + `"]}`, 422, "body", "value_error"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, f.srv.URL, "POST", PathBatch, tt.body, append(key("pro"), "Content-Type: application/json")...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, tt.status, r.body)
			}
			if tt.status != 422 {
				return
			}
			var ve ValidationError
			if err := json.Unmarshal(r.body, &ve); err != nil || len(ve.Detail) != 1 {
				t.Fatalf("body %.300s: %v", r.body, err)
			}
			d := ve.Detail[0]
			if loc := fmt.Sprint(d.Loc...); loc != strings.ReplaceAll(tt.loc, ",", "") || d.Type != tt.typ || d.Msg == "" {
				t.Errorf("detail %+v, want loc %s type %s", d, tt.loc, tt.typ)
			}
		})
	}
}
