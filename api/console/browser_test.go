package console_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/netintel/netintel/internal/testutil/browsertest"
	"github.com/netintel/netintel/probe"
)

// updateScreenshots writes docs/screenshots/console-*.png
// (go test ./api/console -run Browser -update-screenshots).
var updateScreenshots = flag.Bool("update-screenshots", false, "write the console screenshots into docs/screenshots")

var chromium *browsertest.Chromium

func TestMain(m *testing.M) {
	flag.Parse()
	c, err := browsertest.Start(1280, 900)
	if err != nil {
		panic(err)
	}
	chromium = c
	code := m.Run()
	c.Close()
	os.Exit(code)
}

const screenshotDir = "../../docs/screenshots"

// TestConsole_Browser opens the console in headless Chromium as an
// operator would: looks up an address and sees its classification and a
// known-exploited CVE, opens the snapshot history and a build's files,
// reads the TLD table and filters it, watches the pipeline; the page
// requests nothing from a host that is not loopback and logs no error.
func TestConsole_Browser(t *testing.T) {
	e := newEnv(t, nil)
	moreTLDs(t, e)
	// Pipeline samples with work arriving between them.
	for i := range 6 {
		publishObs(t, e.nats.JS, 40*i)
		if i == 3 {
			publishDead(t, e.nats.JS)
		}
		if err := e.sampler.Sample(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // distinct sample times for the chart
	}
	b := chromium.Tab(t)
	shot := func(name string) {
		b.Screenshot(t, screenshotDir, name, 400<<10, *updateScreenshots || os.Getenv("UPDATE_SCREENSHOTS") == "1")
	}
	base := e.srv.URL + "/console/"

	// IP lookup: the page offers an address of the snapshot; type it.
	b.Do(t, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#ip-input")))
	b.WaitTrue(t, `document.querySelector('#ip-examples a')?.textContent === "`+e.cveIP+`"`)
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#ip-input"), e.cveIP), chromedp.Click(chromedp.CSS("#ip-submit")))
	b.WaitTrue(t, `document.querySelector('#cve-table tr[data-cve="`+e.cve+`"]') !== null`)
	want := e.gen.Host(hostIndex(t, e, e.cveIP)).Classifications[0]
	if got := browsertest.Eval[string](t, b, `document.querySelector('#ip-classes .chip[data-class="`+want+`"]')?.textContent || ""`); got == "" {
		t.Errorf("no %s chip in %q", want, browsertest.Eval[string](t, b, `document.getElementById("ip-classes").textContent`))
	}
	if kev := browsertest.Eval[string](t, b, `document.querySelector('#cve-table tr[data-cve="`+e.cve+`"]').textContent`); !bytes.Contains([]byte(kev), []byte("KEV")) {
		t.Errorf("the CVE row says %q, want the KEV flag", kev)
	}
	if got := browsertest.Eval[string](t, b, `document.getElementById("ip-addr").textContent`); got != e.cveIP {
		t.Errorf("address shown %q", got)
	}
	shot("console-lookup")

	// Snapshot history.
	b.Do(t, chromedp.Navigate(base+"#snapshots"), chromedp.WaitReady(chromedp.CSS("#snap-table")))
	b.WaitTrue(t, `document.querySelectorAll('#snap-table tr[data-date]').length === 2`)
	if first := browsertest.Eval[string](t, b, `document.querySelector('#snap-table tr[data-date]').dataset.date`); first != "2026-11-22" {
		t.Errorf("first row %s, want the newest date", first)
	}
	b.Do(t, chromedp.Click(chromedp.CSS(`#snap-table tr[data-date] button`)))
	b.WaitTrue(t, `[...document.querySelectorAll('#snap-table tr.sub:not(.hidden) a[download]')].some(a => a.textContent === "ipintel.mmdb")`)
	shot("console-snapshots")

	// TLD status: the table, its filters, the progress and the chart.
	b.Do(t, chromedp.Navigate(base+"#tld"), chromedp.WaitReady(chromedp.CSS("#tld-table")))
	b.WaitTrue(t, `document.querySelectorAll('#tld-table tr[data-tld]').length === 60`)
	b.WaitTrue(t, `document.querySelector('#tld-chart svg path') !== null`)
	b.WaitTrue(t, `[...document.querySelectorAll('#tld-changes tr[data-tld]')].map(r => r.dataset.tld + " " + r.dataset.change).join() === "t59 tld_added,uk working_flipped"`)
	if p := browsertest.Eval[string](t, b, `document.getElementById("tld-progress").textContent`); p != "350 / 1,400 TLDs (25%)" {
		t.Errorf("progress %q", p)
	}
	shot("console-tld")
	// The running check moves on: the page follows it.
	kv, err := e.nats.JS.KeyValue(t.Context(), probe.ProgressKV)
	if err != nil {
		t.Fatal(err)
	}
	putJSON(t, kv, probe.KeyProgress, probe.Progress{Status: probe.StatusRunning, CurrentStep: "checking RDAP, WHOIS and stealth RDAP", TotalTLDs: 1400, ProcessedTLDs: 700, LastUpdate: time.Now().Unix(), RunID: "20261122T000000Zbeef"})
	b.WaitTrue(t, `document.getElementById("tld-progress").textContent === "700 / 1,400 TLDs (50%)"`)
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#tld-filter"), "de"))
	b.WaitTrue(t, `[...document.querySelectorAll('#tld-table tr[data-tld]')].map(r => r.dataset.tld).join() === "de"`)
	browsertest.Eval[bool](t, b, `(() => {
		const f = document.getElementById("tld-filter"); f.value = ""; f.dispatchEvent(new Event("input"));
		const s = document.getElementById("tld-kind"); s.value = "stealth"; s.dispatchEvent(new Event("change")); return true })()`)
	b.WaitTrue(t, `document.querySelectorAll('#tld-table tr[data-tld]').length === 6`)
	if c := browsertest.Eval[string](t, b, `document.getElementById("tld-count").textContent`); c != "6 of 60 TLDs" {
		t.Errorf("count %q", c)
	}

	// Pipeline.
	b.Do(t, chromedp.Navigate(base+"#pipeline"), chromedp.WaitReady(chromedp.CSS("#jobs-table")))
	b.WaitTrue(t, `document.querySelector('#jobs-table tr[data-job="snapshot"]') !== null && document.querySelector('#rate-chart svg path') !== null`)
	if st := browsertest.Eval[string](t, b, `document.querySelector('#jobs-table tr[data-job="snapshot"]').textContent`); !bytes.Contains([]byte(st), []byte("ok")) {
		t.Errorf("snapshot job row %q", st)
	}
	shot("console-pipeline")

	// Dark when the system is dark.
	if _, err := chromedp.Call(b.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	b.Do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(base+"#tld"), chromedp.WaitReady(chromedp.CSS("#tld-table")))
	b.WaitTrue(t, `document.querySelectorAll('#tld-table tr[data-tld]').length === 60`)
	if bg := browsertest.Eval[string](t, b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(15, 18, 23)" && bg != "rgb(15, 18, 24)" {
		t.Errorf("dark background = %s", bg)
	}
	shot("console-tld-dark")
	// On a phone the page does not scroll sideways: wide tables scroll
	// inside their frames.
	b.Do(t, chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"#lookup/"+e.cveIP), chromedp.WaitReady(chromedp.CSS("#cve-table")))
	b.WaitTrue(t, `document.querySelector('#cve-table tr[data-cve]') !== null`)
	if w := browsertest.Eval[int](t, b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("page is %d px wide on a 390 px screen", w)
	}

	b.CheckLoopbackOnly(t)
	b.CheckConsole(t)
	if n := len(b.Requests()); n < 5 {
		t.Errorf("only %d requests recorded: the request log does not work", n)
	}
}

// moreTLDs publishes a root zone's worth of made-up results and runs, so
// the table and the chart look as they do in production.
func moreTLDs(t *testing.T, e *env) {
	t.Helper()
	yes, no := true, false
	str := func(s string) *string { return &s }
	var res probe.Results
	for i := range 60 {
		tld := fmt.Sprintf("t%02d", i)
		switch i {
		case 0:
			tld = "de"
		case 1:
			tld = "xn--p1ai"
		case 2:
			tld = "uk"
		}
		r := probe.Result{TLD: tld, RDAPURLs: []string{}, StealthURLs: []string{}}
		if i%4 != 3 {
			r.RDAPSupported = true
			r.RDAPURLs = []string{"https://rdap.nic." + tld + "/"}
			w := i%7 != 0
			r.RDAPWorking = &w
			if w {
				r.WorkingURL = str(r.RDAPURLs[0])
			}
		}
		if i%5 != 4 {
			r.WhoisServer = str("whois.nic." + tld)
			r.WhoisAvailable = &yes
			if i%6 == 5 {
				r.WhoisAvailable = &no
			}
		}
		if i%10 == 0 {
			r.StealthRDAP, r.StealthURLs = true, []string{"https://rdap." + tld + ".example/"}
		}
		res.Results = append(res.Results, r)
	}
	res.TotalTLDs = len(res.Results)
	put := func(key string, v any) {
		b, _ := json.Marshal(v)
		if _, err := e.store.Put(t.Context(), key, bytes.NewReader(b), int64(len(b)), "application/json"); err != nil {
			t.Fatal(err)
		}
	}
	put("tld/"+probe.LatestJSON, res)
	kv, err := e.nats.JS.KeyValue(t.Context(), probe.ProgressKV)
	if err != nil {
		t.Fatal(err)
	}
	putJSON(t, kv, probe.KeyPublished, probe.Published{RunID: "20261117T000000Z007", LastUpdate: time.Date(2026, 11, 17, 1, 0, 0, 0, time.UTC).Unix(), ResultsAvailable: 60, StealthCount: 6})
	old, err := e.store.List(t.Context(), "tld/runs/")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range old {
		if err := e.store.Delete(t.Context(), o.Key); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		run := "202611" + strconv.Itoa(10+i) + "T000000Z00" + strconv.Itoa(i)
		put(filepath.ToSlash("tld/runs/"+run+"/summary.json"), probe.Summary{RunID: run, FinishedAt: time.Date(2026, 11, 10+i, 1, 0, 0, 0, time.UTC).Unix(),
			TotalTLDs: 1440 + i, RDAPWorking: 1180 + 9*i, WhoisAvailable: 1300 - 3*i, StealthFound: 20 + 2*i})
	}
	// The last two runs' results: .uk's RDAP came back, .t59 is new.
	before := res
	before.Results = slices.Clone(res.Results[:59])
	before.Results[2].RDAPWorking, before.Results[2].WorkingURL = &no, nil
	put("tld/runs/20261116T000000Z0006/results.json", before)
	put("tld/runs/20261117T000000Z0007/results.json", res)
}
