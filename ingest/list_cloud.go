package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// observedAt is the time of a feed that carries none: opt.ObservedAt (the
// file's modification time or the response's Last-Modified), else now.
func (o Options) observedAt() string {
	if o.ObservedAt.IsZero() {
		return ipmodel.FormatTime(time.Now())
	}
	return ipmodel.FormatTime(o.ObservedAt)
}

// azureTag is one value of Microsoft's ServiceTags_Public file.
type azureTag struct {
	Name       string `json:"name"`
	Properties struct {
		Region          string   `json:"region"`
		SystemService   string   `json:"systemService"`
		AddressPrefixes []string `json:"addressPrefixes"`
	} `json:"properties"`
}

// azureRank orders the tags that list one prefix by how much they say: a
// service first, then any tag but the catch-all AzureCloud ones, then a
// region. Storage.EastUS > Storage > AzureFrontDoor.Frontend >
// AzureCloud.eastus > AzureCloud.
func azureRank(t *azureTag) int {
	r := 0
	if t.Properties.SystemService != "" {
		r += 4
	}
	if t.Name != "AzureCloud" && !strings.HasPrefix(t.Name, "AzureCloud.") {
		r += 2
	}
	if t.Properties.Region != "" {
		r++
	}
	return r
}

// AzureServiceTags reads Microsoft's Azure IP Ranges and Service Tags file
// (ServiceTags_Public_YYYYMMDD.json). The file lists one prefix under many
// tags (AzureCloud, AzureCloud.<region>, Storage, Storage.EastUS, ...);
// each distinct prefix is emitted once, in the order it first appears,
// with the most specific tag that lists it (a tag with a service, then
// any tag but AzureCloud and AzureCloud.<region>, then one with a region;
// the first of equals). Its region is
// the first non-empty region of any tag listing it, its service the tag's
// systemService or, lacking one, the tag's name. A prefix listed under an
// AzureFrontDoor.* tag is cdn, every other hosting. The file carries no
// time: observed_at is opt.ObservedAt (Last-Modified or mtime).
func AzureServiceTags(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("azure-service-tags")
	when := opt.observedAt()
	type entry struct {
		line   int
		tag    *azureTag
		region string
		cdn    bool
	}
	var order []netip.Prefix
	seen := map[netip.Prefix]*entry{}
	err := jsonRanges(r, []string{"values"}, func(string, json.RawMessage) error { return nil }, func(line int, raw json.RawMessage) {
		t := new(azureTag)
		if err := json.Unmarshal(raw, t); err != nil {
			bad(LineError{line, fmt.Errorf("service tag: %w", err)})
			return
		}
		if t.Name == "" {
			bad(LineError{line, errors.New("service tag without a name")})
			return
		}
		for i, s := range t.Properties.AddressPrefixes {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				bad(LineError{line, fmt.Errorf("service tag %s: addressPrefixes[%d]: not a CIDR: %q", t.Name, i, s)})
				continue
			}
			p = p.Masked()
			e := seen[p]
			if e == nil {
				e = &entry{line: line, tag: t}
				seen[p] = e
				order = append(order, p)
			} else if azureRank(t) > azureRank(e.tag) {
				e.tag = t
			}
			if e.region == "" {
				e.region = t.Properties.Region
			}
			e.cdn = e.cdn || strings.HasPrefix(t.Name, "AzureFrontDoor.")
		}
	}, "azure service tags")
	if err != nil {
		return err
	}
	for _, p := range order {
		e := seen[p]
		kind, service := "hosting", e.tag.Properties.SystemService
		if e.cdn {
			kind = "cdn"
		}
		if service == "" {
			service = e.tag.Name
		}
		o := Observation{Type: TypeRange, Network: p.String(), Source: src, ObservedAt: when,
			Range:  &Range{Kind: kind, Provider: "Microsoft Azure", Region: e.region, Service: service, Confidence: opt.conf(0.95)},
			Claims: []Claim{{OrgName: "Microsoft Corporation", SignalConfidence: opt.conf(0.95)}}}
		if err := emitChecked(e.line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

// OracleRanges reads Oracle Cloud Infrastructure's public_ip_ranges.json:
// regions, each with CIDRs and their tags (OCI, OSN, OBJECT_STORAGE). Each
// CIDR becomes a hosting range of Oracle Cloud with its region and its
// tags joined by "," as the service; observed_at is last_updated_timestamp.
func OracleRanges(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("oracle-ranges")
	var updated time.Time
	var emitErr error
	err := timedRanges(r, "regions", "last_updated_timestamp", "oracle ranges", &updated, func(line int, raw json.RawMessage) {
		if emitErr != nil {
			return
		}
		var reg struct {
			Region string `json:"region"`
			CIDRs  []struct {
				CIDR string   `json:"cidr"`
				Tags []string `json:"tags"`
			} `json:"cidrs"`
		}
		if err := json.Unmarshal(raw, &reg); err != nil {
			bad(LineError{line, fmt.Errorf("region: %w", err)})
			return
		}
		if updated.IsZero() {
			bad(LineError{line, errors.New("region before last_updated_timestamp")})
			return
		}
		for _, c := range reg.CIDRs {
			o := Observation{Type: TypeRange, Network: c.CIDR, Source: src, ObservedAt: ipmodel.FormatTime(updated),
				Range:  &Range{Kind: "hosting", Provider: "Oracle Cloud", Region: reg.Region, Service: strings.Join(c.Tags, ","), Confidence: opt.conf(0.95)},
				Claims: []Claim{{OrgName: "Oracle Corporation", SignalConfidence: opt.conf(0.95)}}}
			if emitErr = emitChecked(line, o, emit, bad); emitErr != nil {
				return
			}
		}
	})
	return errors.Join(err, emitErr)
}

// FastlyRanges reads Fastly's public IP list (api.fastly.com/public-ip-list:
// "addresses" and "ipv6_addresses", arrays of CIDR strings). Each becomes
// a cdn range of Fastly; the list carries no time, so observed_at is
// opt.ObservedAt.
func FastlyRanges(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("fastly-ranges")
	when := opt.observedAt()
	var emitErr error
	err := jsonRanges(r, []string{"addresses", "ipv6_addresses"}, func(string, json.RawMessage) error { return nil }, func(line int, raw json.RawMessage) {
		if emitErr != nil {
			return
		}
		var cidr string
		if err := json.Unmarshal(raw, &cidr); err != nil {
			bad(LineError{line, fmt.Errorf("address: %w", err)})
			return
		}
		o := Observation{Type: TypeRange, Network: cidr, Source: src, ObservedAt: when,
			Range:  &Range{Kind: "cdn", Provider: "Fastly", Confidence: opt.conf(0.95)},
			Claims: []Claim{{OrgName: "Fastly, Inc.", SignalConfidence: opt.conf(0.95)}}}
		emitErr = emitChecked(line, o, emit, bad)
	}, "fastly ranges")
	return errors.Join(err, emitErr)
}
