// audit-replay serves, on loopback, a TLS web server with a FortiGate
// factory certificate subject (recog's x509_subjects.xml example)
// answering the FortiGate capture of the accuracy corpus, and SSH servers
// that send captured SSH identification lines, for running the real
// auditors against (ingest/testdata/SOURCES.md):
//
//	go run ./ingest/testdata/audit-replay 127.0.0.1:10443 127.0.0.1:22=SSH-2.0-FortiSSH_2.5 127.0.0.1:10023=SSH-2.0-ROSSSH
//
// It lives under testdata so that the go tool does not build it with the
// module.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

func main() {
	tlsAddr := os.Args[1]
	// The unit's certificate as a FortiGate's factory certificate is made:
	// the unit's subject (recog's x509_subjects.xml example) issued by
	// Fortinet's sub-CA, whose name is OU=Certificate Authority (the
	// corpus's group AJ2 captures of real units); a self-issued FortiGate
	// subject is what honeypots make (10-fortinet.yaml's guard).
	caKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(0x7d1),
		Subject: pkix.Name{CommonName: "fortinet-subca2001", OrganizationalUnit: []string{"Certificate Authority"}, Organization: []string{"Fortinet"},
			Locality: []string{"Sunnyvale"}, Province: []string{"California"}, Country: []string{"US"}},
		NotBefore: time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2038, 1, 19, 3, 14, 7, 0, time.UTC),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		log.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		log.Fatal(err)
	}
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(0x5a3c81d2),
		Subject: pkix.Name{CommonName: "FG100ETK1800118", OrganizationalUnit: []string{"FortiGate"}, Organization: []string{"Fortinet"},
			Locality: []string{"Sunnyvale"}, Province: []string{"California"}, Country: []string{"US"}},
		NotBefore: time.Date(2018, 5, 2, 10, 11, 12, 0, time.UTC), NotAfter: time.Date(2038, 1, 19, 3, 14, 7, 0, time.UTC),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		log.Fatal(err)
	}
	body := "<html><script type=\"text/javascript\">\nif (window!=top) top.location=window.location;top.location=\"/remote/login\";\n</script></html>\n"
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, kv := range [][2]string{{"ETag", `"83-65132647"`}, {"Accept-Ranges", "bytes"}, {"Content-Type", "text/html"}, {"X-Frame-Options", "SAMEORIGIN"},
			{"Content-Security-Policy", "frame-ancestors 'self'; object-src 'self'; script-src 'self' https: 'unsafe-eval' 'unsafe-inline' blob:;"},
			{"X-XSS-Protection", "1; mode=block"}, {"X-Content-Type-Options", "nosniff"}, {"Strict-Transport-Security", "max-age=31536000"}} {
			w.Header().Set(kv[0], kv[1])
		}
		fmt.Fprint(w, body)
	})
	srv := &http.Server{Addr: tlsAddr, Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der, caDER}, PrivateKey: key}}, MinVersion: tls.VersionTLS10}}
	go func() { log.Fatal(srv.ListenAndServeTLS("", "")) }()

	hk, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, _ := ssh.NewSignerFromKey(hk)
	rk, _ := rsa.GenerateKey(rand.Reader, 3072)
	rsigner, _ := ssh.NewSignerFromKey(rk)
	for _, arg := range os.Args[2:] {
		addr, banner, _ := strings.Cut(arg, "=")
		cfg := &ssh.ServerConfig{ServerVersion: banner, PasswordCallback: func(ssh.ConnMetadata, []byte) (*ssh.Permissions, error) { return nil, fmt.Errorf("no") }}
		cfg.AddHostKey(signer)
		cfg.AddHostKey(rsigner)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					log.Fatal(err)
				}
				go func() { _, _, _, _ = ssh.NewServerConn(c, cfg); c.Close() }()
			}
		}()
	}
	select {}
}
