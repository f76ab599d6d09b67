package registrytest

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// Server answers the provider registry protocol for one release of NAMESPACE/TYPE, over
// HTTPS on 127.0.0.1 with a certificate signed by a CA made for the server:
//
//	GET /.well-known/terraform.json                          service discovery
//	GET /v1/providers/NAMESPACE/TYPE/versions                the versions list
//	GET /v1/providers/NAMESPACE/TYPE/VERSION/download/OS/ARCH a download answer: the zip, its
//	                                                         shasum, SHA256SUMS, its signature and
//	                                                         the signing key
//	GET /files/NAME                                          the zips, SHA256SUMS and the .sig
//
// The download answer's shasum is the SHA-256 of the zip served, as a registry computes it from
// what it serves; only the signed SHA256SUMS vouches for it.
type Server struct {
	CACertFile string // the CA that signed the server's certificate: the CLI's SSL_CERT_FILE

	namespace string
	release   *Release
	srv       *httptest.Server
	pki       *valkeytest.PKI
	mu        sync.Mutex
	requests  []string
}

// Start serves release as namespace/TYPE until Close.
func Start(namespace string, release *Release) (*Server, error) {
	pki, err := valkeytest.NewPKI()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(pki.ServerCert, pki.ServerKey)
	if err != nil {
		pki.Close()
		return nil, err
	}
	s := &Server{CACertFile: pki.CACertFile, namespace: namespace, release: release, pki: pki}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/terraform.json", s.discovery)
	mux.HandleFunc("GET /v1/providers/{namespace}/{type}/versions", s.versions)
	mux.HandleFunc("GET /v1/providers/{namespace}/{type}/{version}/download/{os}/{arch}", s.download)
	mux.HandleFunc("GET /files/{name}", s.file)
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.Path)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.srv.StartTLS()
	return s, nil
}

// StartT is Start for one test: the server closes when the test ends.
func StartT(tb testing.TB, namespace string, release *Release) *Server {
	tb.Helper()
	s, err := Start(namespace, release)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server and removes its CA.
func (s *Server) Close() {
	s.srv.Close()
	s.pki.Close()
}

// URL is the server's base URL, https://127.0.0.1:PORT.
func (s *Server) URL() string { return s.srv.URL }

// ProvidersURL is the providers.v1 service: where service discovery points, and what a CLI
// configuration's host block names.
func (s *Server) ProvidersURL() string { return s.srv.URL + "/v1/providers/" }

// CLIConfig is a CLI configuration whose host block sends the provider registry protocol for
// hostname (which need not resolve) to the server.
func (s *Server) CLIConfig(hostname string) string {
	return fmt.Sprintf("host %q {\n  services = {\n    \"providers.v1\" = %q\n  }\n}\n", hostname, s.ProvidersURL())
}

// Requests are the paths the server was asked for, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Server) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]string{"providers.v1": "/v1/providers/"})
}

// ours reports whether the request names the served provider (and version, when it has one).
func (s *Server) ours(r *http.Request) bool {
	v := r.PathValue("version")
	return r.PathValue("namespace") == s.namespace && r.PathValue("type") == s.release.Type &&
		(v == "" || v == s.release.Version)
}

type platform struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

func (s *Server) versions(w http.ResponseWriter, r *http.Request) {
	if !s.ours(r) {
		http.NotFound(w, r)
		return
	}
	var platforms []platform
	for p := range s.release.Zips {
		os, arch, _ := strings.Cut(p, "_")
		platforms = append(platforms, platform{os, arch})
	}
	writeJSON(w, map[string]any{"versions": []map[string]any{{
		"version": s.release.Version, "protocols": s.release.Protocols, "platforms": platforms,
	}}})
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("os") + "_" + r.PathValue("arch")
	zip, ok := s.release.Zips[p]
	if !s.ours(r) || !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(zip)
	sums := s.release.SumsName()
	writeJSON(w, map[string]any{
		"protocols":             s.release.Protocols,
		"os":                    r.PathValue("os"),
		"arch":                  r.PathValue("arch"),
		"filename":              s.release.ZipName(p),
		"download_url":          "/files/" + s.release.ZipName(p),
		"shasum":                hex.EncodeToString(sum[:]),
		"shasums_url":           "/files/" + sums,
		"shasums_signature_url": "/files/" + sums + ".sig",
		"signing_keys": map[string]any{"gpg_public_keys": []map[string]string{{
			"key_id": s.release.KeyID, "ascii_armor": s.release.SigningKey,
		}}},
	})
}

func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var body []byte
	switch name {
	case s.release.SumsName():
		body = s.release.SHA256Sums
	case s.release.SumsName() + ".sig":
		body = s.release.Signature
	default:
		for p, zip := range s.release.Zips {
			if name == s.release.ZipName(p) {
				body = zip
			}
		}
	}
	if body == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
