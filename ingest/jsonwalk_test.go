package ingest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONWalk_Walk: the one JSON reader of the adapters keeps every
// record before a cut (in a top-level array and in a wrapper's array),
// gives each record its own line, passes a wrapping object's other
// members to header, and after a document that does not parse either
// resumes at the next line that starts one or stops, as asked.
func TestJSONWalk_Walk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		walk    jsonWalk
		in      string
		records []string // "line:record"
		headers []string
		bad     []string // "line:error substring"
	}{
		{name: "array cut", walk: jsonWalk{what: "x"}, in: "[\n{\"a\":1},\n{\"a\":2},\n{\"a\":",
			records: []string{`2:{"a":1}`, `3:{"a":2}`}, bad: []string{"4:x: array: the input ends inside a JSON value (cut file?)"}},
		{name: "wrapper cut", walk: jsonWalk{what: "x", wrappers: []string{"results"}}, in: "{\"total\": 3,\n\"results\": [\n{\"a\":1},\n{\"a\":2},\n{\"a\"",
			records: []string{`3:{"a":1}`, `4:{"a":2}`}, headers: []string{"total=3"}, bad: []string{"5:x: results: the input ends inside a JSON value (cut file?)"}},
		{name: "wrapper name on a record", walk: jsonWalk{what: "x", wrappers: []string{"data"}}, in: `{"ip":"192.0.2.1","data":"banner"}`,
			records: []string{`1:{"ip":"192.0.2.1","data":"banner"}`}, headers: []string{`ip="192.0.2.1"`, `data="banner"`}},
		{name: "resync after a bad document", walk: jsonWalk{what: "x", resync: true}, in: "{\"a\":1}\n{\"a\" 2}\n{\"a\":3}\n",
			records: []string{`1:{"a":1}`, `3:{"a":3}`}, bad: []string{"2:x: json: invalid character"}},
		{name: "stop after a bad document", walk: jsonWalk{what: "x"}, in: "{\"a\":1}\n{\"a\" 2}\n{\"a\":3}\n",
			records: []string{`1:{"a":1}`}, bad: []string{"2:x: json: invalid character"}},
		{name: "scalar reported", walk: jsonWalk{what: "x", resync: true}, in: "5\n{\"a\":1}\n",
			records: []string{`2:{"a":1}`}, bad: []string{"1:x: json: not an object or array"}},
		{name: "values and a byte-order mark", walk: jsonWalk{values: true}, in: "\ufeff\"s\"\n[1,\n2]\n",
			records: []string{`1:"s"`, `2:1`, `3:2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var recs, headers, bad []string
			w := tt.walk
			w.header = func(k string, raw json.RawMessage) { headers = append(headers, k+"="+string(raw)) }
			err := w.walk([]byte(tt.in), 1, func(e LineError) { bad = append(bad, e.Error()) }, func(line int, rec json.RawMessage, _ bool) error {
				recs = append(recs, strings.Join([]string{itoa(line), string(rec)}, ":"))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(recs, "|") != strings.Join(tt.records, "|") {
				t.Errorf("records %q, want %q", recs, tt.records)
			}
			if tt.headers != nil && strings.Join(headers, "|") != strings.Join(tt.headers, "|") {
				t.Errorf("headers %q, want %q", headers, tt.headers)
			}
			if len(bad) != len(tt.bad) {
				t.Fatalf("errors %q, want %q", bad, tt.bad)
			}
			for i, want := range tt.bad {
				line, text, _ := strings.Cut(want, ":")
				if !strings.HasPrefix(bad[i], "line "+line+": ") || !strings.Contains(bad[i], text) {
					t.Errorf("error %q, want line %s and %q", bad[i], line, text)
				}
			}
		})
	}
}
