package ingest

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestZZDebug(t *testing.T) {
	format, file := os.Getenv("ZZF"), os.Getenv("ZZFILE")
	if format == "" {
		t.Skip()
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt := Options{Skipped: func(l int, r string) { fmt.Println("SKIP", l, r) }, Warn: func(l int, m string) { fmt.Println("WARN", l, m) }}
	err = Adapters()[format](f, opt, func(l int, o Observation) error {
		b, _ := json.Marshal(o)
		s := string(b)
		if len(s) > 1500 && os.Getenv("ZZFULL") == "" {
			s = s[:1500]
		}
		fmt.Println("OBS", l, s)
		return nil
	}, func(le LineError) { fmt.Println("BAD", le) })
	fmt.Println("ERR", err)
}
