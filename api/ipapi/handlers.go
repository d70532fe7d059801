package ipapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/netintel/netintel/internal/httpx"
)

// maxBatchBody bounds the batch request body; 100 IPv6 addresses in JSON
// take under 5 KiB.
const maxBatchBody = 64 << 10

// lookup is GET /api/v1/shadow_vpn/lookup/{ip}. The body is rendered into
// a pooled buffer (from the MMDB in place, see render.go) and written once.
func (s *Service) lookup(w http.ResponseWriter, r *http.Request, tier Tier) error {
	addr, p, snap, err := s.lookupRequest(r)
	if err != nil {
		return err
	}
	bp := bodyPool.Get().(*[]byte)
	body, n, err := appendLookup((*bp)[:0], snap.For(tier).Index, addr, p, tier)
	switch {
	case err != nil:
		s.log.Error("lookup", "snapshot", snap.Manifest.SnapshotDate, "err", err)
		err = errSnapshotRead
	case n == 0:
		err = notFound("no assets are known for " + addr.String())
	default:
		writeBody(w, http.StatusOK, body)
	}
	if cap(body) <= maxPooledBody {
		*bp = body
		bodyPool.Put(bp)
	}
	return err
}

// ipLookup is GET /api/v1/ip/{ip} (the customer's /api/v1/vpn/ip/{ip}):
// the single-address classification, a batch item's fields as the tier
// sees them, with the address's assets shaped as the asset lookup shapes
// them (same query parameters). 404 only when the tier's build knows
// nothing of the address; an address with classifications and no assets
// (a Tor exit, a cloud range) answers 200 with "assets": [].
func (s *Service) ipLookup(w http.ResponseWriter, r *http.Request, tier Tier) error {
	addr, p, snap, err := s.lookupRequest(r)
	if err != nil {
		return err
	}
	rec, found, err := snap.For(tier).Index.Lookup(addr, p.cves)
	switch {
	case err != nil:
		s.log.Error("ip lookup", "snapshot", snap.Manifest.SnapshotDate, "err", err)
		return errSnapshotRead
	case !found:
		return notFound("nothing is known about " + addr.String())
	}
	httpx.WriteJSON(w, http.StatusOK, IPResult{BatchRecord: shapeBatch(0, addr.String(), rec, tier),
		Country: rec.Country, Region: rec.Region, City: rec.City, Assets: shapeLookup(addr.String(), rec, p, tier).Assets})
	return nil
}

// lookupRequest reads what both single-address routes take: the address,
// the lookup parameters and the current snapshot, or the failure to answer.
func (s *Service) lookupRequest(r *http.Request) (netip.Addr, lookupParams, *Snapshot, error) {
	raw := r.PathValue("ip")
	addr, ok := parseAddr(raw)
	if !ok {
		return addr, lookupParams{}, nil, invalidIP(raw)
	}
	p := defaultLookupParams
	if r.URL.RawQuery != "" { // most lookups have no query: no url.Values for them
		var errs problems
		if p, errs = parseLookupQuery(r.URL.Query()); len(errs) > 0 {
			return addr, p, nil, errs
		}
	}
	snap, err := s.snapshot()
	return addr, p, snap, err
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// batch is POST /api/v1/ip/batch.
func (s *Service) batch(w http.ResponseWriter, r *http.Request, tier Tier) error {
	ips, errs := parseBatchBody(http.MaxBytesReader(w, r.Body, maxBatchBody))
	if len(errs) > 0 {
		return errs
	}
	snap, err := s.snapshot()
	if err != nil {
		return err
	}
	idx := snap.For(tier).Index
	res := BatchResponse{Results: make([]any, len(ips)), CreditsUsed: len(ips)}
	for i, raw := range ips {
		addr, ok := parseAddr(raw)
		if !ok {
			res.Results[i] = BatchError{Index: i, Input: truncate(raw, 64), Error: ErrorDetail{Code: CodeInvalidIP, Message: "not an IPv4 or IPv6 address"}}
			continue
		}
		rec, found, err := idx.Lookup(addr, false)
		if err != nil {
			s.log.Error("batch lookup", "snapshot", snap.Manifest.SnapshotDate, "err", err)
			res.Results[i] = BatchError{Index: i, Input: truncate(raw, 64), Error: ErrorDetail{Code: CodeInternal, Message: "the snapshot could not be read at this address"}}
			continue
		}
		if !found {
			rec = nil
		}
		res.Results[i] = shapeBatch(i, addr.String(), rec, tier)
	}
	w.Header().Set("X-Credits-Used", strconv.Itoa(len(ips)))
	httpx.WriteJSON(w, http.StatusOK, res)
	return nil
}

// parseBatchBody validates {"ips": [string, ...]} with 1..MaxBatch items.
// Items that are strings but not addresses are answered per item, not here.
func parseBatchBody(body io.Reader) ([]string, problems) {
	var errs problems
	b, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			errs.add(ValidationItem{Loc: []any{"body"}, Msg: "Value error, the body is larger than " + strconv.Itoa(maxBatchBody) + " bytes", Type: "value_error", Ctx: map[string]any{"max_bytes": maxBatchBody}})
		} else {
			errs.add(ValidationItem{Loc: []any{"body"}, Msg: "Value error, the body could not be read", Type: "value_error"})
		}
		return nil, errs
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() || trailing(dec) {
		msg := "JSON decode error"
		if err != nil {
			msg += ": " + err.Error()
		}
		errs.add(ValidationItem{Loc: []any{"body"}, Msg: msg, Type: "json_invalid", Ctx: map[string]any{"error": "not one JSON value"}})
		return nil, errs
	}
	obj, ok := v.(map[string]any)
	if !ok {
		errs.add(ValidationItem{Loc: []any{"body"}, Msg: "Input should be a valid dictionary or object to extract fields from", Type: "model_attributes_type", Input: v})
		return nil, errs
	}
	raw, ok := obj["ips"]
	if !ok {
		errs.add(ValidationItem{Loc: []any{"body", "ips"}, Msg: "Field required", Type: "missing", Input: obj})
		return nil, errs
	}
	list, ok := raw.([]any)
	if !ok {
		errs.add(ValidationItem{Loc: []any{"body", "ips"}, Msg: "Input should be a valid list", Type: "list_type", Input: raw})
		return nil, errs
	}
	switch {
	case len(list) > MaxBatch:
		errs.add(ValidationItem{Loc: []any{"body", "ips"}, Msg: "List should have at most " + strconv.Itoa(MaxBatch) + " items after validation, not " + strconv.Itoa(len(list)),
			Type: "too_long", Ctx: map[string]any{"field_type": "List", "max_length": MaxBatch, "actual_length": len(list)}})
		return nil, errs
	case len(list) == 0:
		errs.add(ValidationItem{Loc: []any{"body", "ips"}, Msg: "List should have at least 1 item after validation, not 0",
			Type: "too_short", Input: list, Ctx: map[string]any{"field_type": "List", "min_length": 1, "actual_length": 0}})
		return nil, errs
	}
	ips := make([]string, len(list))
	for i, it := range list {
		s, ok := it.(string)
		if !ok {
			errs.add(ValidationItem{Loc: []any{"body", "ips", i}, Msg: "Input should be a valid string", Type: "string_type", Input: it})
			continue
		}
		ips[i] = s
	}
	return ips, errs
}

// trailing reports whether anything but white space follows the value.
func trailing(dec *json.Decoder) bool {
	_, err := dec.Token()
	return !errors.Is(err, io.EOF)
}

// exportCSV is GET /api/v1/export/csv: a streamed, row-capped CSV. It
// streams, so it stays a plain handler: the failures before the first
// byte are answered by httpx.Fail.
func (s *Service) exportCSV(w http.ResponseWriter, r *http.Request, tier Tier) {
	p, snap, err := s.exportRequest(w, r, tier)
	if err != nil {
		httpx.Fail(s.log, w, r, err)
		return
	}
	snap, rows, err := s.exportTable(r.Context(), snap, tier)
	if err != nil {
		httpx.Fail(s.log, w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="ipintel-`+snap.Manifest.SnapshotDate+`.csv"`)
	w.Header().Set("X-Snapshot-Date", snap.Manifest.SnapshotDate)
	w.WriteHeader(http.StatusOK)
	if _, err := rows.WriteCSV(r.Context(), w, p.filter, p.limit); err != nil {
		s.log.Debug("csv export stopped", "err", err)
	}
}

// exportTable returns the export table of tier's view of snap once it is
// built, before anything is written: a snapshot is swapped in as soon as
// its MMDBs are mapped, and its table follows (docs/ip-api.md, snapshot
// load). When the build was stopped because a newer snapshot came, the
// export waits for that one's table (and is served from it). It fails with
// a 503 when ctx ends or Options.ExportWait passes first, or the table
// failed to build.
func (s *Service) exportTable(ctx context.Context, snap *Snapshot, tier Tier) (*Snapshot, *Table, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ExportWait)
	defer cancel()
	for {
		rows := snap.For(tier).Rows
		err := rows.Wait(ctx)
		switch {
		case err == nil:
			return snap, rows, nil
		case errors.Is(err, errSuperseded):
			if next := s.cur.load(); next != nil && next != snap {
				snap = next
				continue
			}
		case ctx.Err() != nil:
			return nil, nil, exportPending(snap.Manifest.SnapshotDate)
		}
		return nil, nil, exportFailed(snap.Manifest.SnapshotDate)
	}
}

// exportRequest reads what the CSV export takes (and sets the row limit
// it applies), or returns the failure to answer.
func (s *Service) exportRequest(w http.ResponseWriter, r *http.Request, tier Tier) (exportParams, *Snapshot, error) {
	p, errs := parseExportQuery(r.URL.Query())
	w.Header().Set("X-Svc-Row-Limit", strconv.Itoa(p.limit))
	if tier < tierPro {
		return p, nil, tierError("the CSV export", tierPro)
	}
	if err := errs.err(); err != nil {
		return p, nil, err
	}
	snap, err := s.snapshot()
	return p, snap, err
}

// publicLookup is GET /public/v1/lookup/{ip}: classification only.
func (s *Service) publicLookup(w http.ResponseWriter, r *http.Request) error {
	raw := r.PathValue("ip")
	addr, ok := parseAddr(raw)
	if !ok {
		return invalidIP(raw)
	}
	snap, err := s.snapshot()
	if err != nil {
		return err
	}
	rec, found, err := snap.For(TierFree).Index.Lookup(addr, false)
	if err != nil {
		s.log.Error("public lookup", "snapshot", snap.Manifest.SnapshotDate, "err", err)
		found = false
	}
	out := PublicLookup{IP: addr.String(), Classifications: []string{}, SnapshotDate: snap.Manifest.SnapshotDate}
	if found {
		out.Classifications = visibleClasses(rec.Classifications, TierFree)
		out.Found = len(out.Classifications) > 0
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// PublicSnapshot is the body of GET /public/v1/snapshot.
type PublicSnapshot struct {
	SnapshotDate  string `json:"snapshot_date"`
	SchemaVersion string `json:"schema_version"`
	BuildTime     string `json:"build_time"`
	Hosts         int64  `json:"hosts"`
	Ranges        int64  `json:"ranges"`
}

// publicSnapshot is GET /public/v1/snapshot: which snapshot is served.
func (s *Service) publicSnapshot(w http.ResponseWriter, _ *http.Request) error {
	snap, err := s.snapshot()
	if err != nil {
		return err
	}
	m := snap.Manifest
	httpx.WriteJSON(w, http.StatusOK, PublicSnapshot{SnapshotDate: m.SnapshotDate, SchemaVersion: m.SchemaVersion, BuildTime: m.BuildTime, Hosts: m.Hosts, Ranges: m.Ranges})
	return nil
}
