package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
)

// devInternalKeys are api.internal_key values published in our own files
// (pipeline.yaml up to issue 31): anyone can read them, so they are no
// secret.
var devInternalKeys = []string{"dev-internal-key-change-me"}

// devHashKeys are gateway.hash_key values that are no secret: empty (the
// gateway then hashes with its built-in development key, listed too) and
// the value pipeline.yaml ships.
var devHashKeys = []string{"", "dev-gateway-hash-key-change-me", "netintel-dev-gateway-hash-key"}

// IsDevInternalKey reports whether k is a published development value of
// api.internal_key. An empty key is not: the backend refuses every request
// then.
func IsDevInternalKey(k string) bool { return slices.Contains(devInternalKeys, k) }

// IsDevHashKey reports whether k makes the gateway hash key secrets with a
// published development key.
func IsDevHashKey(k string) bool { return slices.Contains(devHashKeys, k) }

// Loopback reports whether a listen address takes connections from this
// machine only: host localhost or a loopback address. An empty or wildcard
// host (":8080", "0.0.0.0:8080", "[::]:8080") and any other name or address
// listen beyond loopback.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckExposedKeys refuses development keys on a role that listens beyond
// loopback: api.internal_key when the role serves ip or gateway (anyone who
// reads our files could call the backend with any X-Tier, uncharged), and
// gateway.hash_key when it serves gateway. products are the products the
// role serves and listenFor gives each one's address (after --listen). The
// error names every key and one exposed address, never a value.
func (c *Config) CheckExposedKeys(products []string, listenFor func(product string) string) error {
	exposed := ""
	for _, p := range products {
		if a := listenFor(p); !Loopback(a) {
			exposed = a
			break
		}
	}
	if exposed == "" {
		return nil
	}
	var errs []error
	if IsDevInternalKey(c.API.InternalKey) && (slices.Contains(products, "ip") || slices.Contains(products, "gateway")) {
		errs = append(errs, fmt.Errorf("api.internal_key: the published development value, and this role listens beyond loopback on %s; set NETINTEL_INTERNAL_KEY (or api.internal_key) to a secret of your own", exposed))
	}
	if IsDevHashKey(c.Gateway.HashKey) && slices.Contains(products, "gateway") {
		errs = append(errs, fmt.Errorf("gateway.hash_key: empty or the published development value, and this role listens beyond loopback on %s; set NETINTEL_GATEWAY_HASH_KEY (or gateway.hash_key) to a secret of your own", exposed))
	}
	return errors.Join(errs...)
}
