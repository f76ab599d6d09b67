package valkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// PKI is a throwaway certificate authority with one server and one client certificate,
// written as PEM files under Dir. The server certificate names 127.0.0.1 and localhost.
type PKI struct {
	Dir string

	CACert, ServerCert, ServerKey, ClientCert, ClientKey                     []byte // PEM
	CACertFile, ServerCertFile, ServerKeyFile, ClientCertFile, ClientKeyFile string
}

// ClientCertUser is the common name of the client certificate: a valid ACL user name, which
// Valkey 9 logs a client in as with `tls-auth-clients-user CN`.
const ClientCertUser = "valkeytest-client"

// NewPKI generates a CA and signs a server and a client certificate with it.
func NewPKI() (*PKI, error) {
	dir, err := os.MkdirTemp("", "valkeytest-pki-")
	if err != nil {
		return nil, err
	}
	p := &PKI{Dir: dir}
	now := time.Now()
	var ca *x509.Certificate
	var caKey *ecdsa.PrivateKey
	// issue makes a key and a certificate of it from tmpl, signed by the CA (by itself while
	// there is none: the first one issued is the CA), both as PEM.
	issue := func(serial int64, name string, tmpl x509.Certificate) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber, tmpl.Subject = big.NewInt(serial), pkix.Name{CommonName: name}
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
		parent, signer := ca, caKey
		if ca == nil {
			parent, signer = &tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, &tmpl, parent, &key.PublicKey, signer)
		if err != nil {
			return nil, nil, err
		}
		if ca == nil {
			if ca, err = x509.ParseCertificate(der); err != nil {
				return nil, nil, err
			}
			caKey = key
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
	}
	if p.CACert, _, err = issue(1, "valkeytest CA", x509.Certificate{IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}); err != nil {
		return nil, err
	}
	if p.ServerCert, p.ServerKey, err = issue(2, "valkeytest server", x509.Certificate{KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}); err != nil {
		return nil, err
	}
	if p.ClientCert, p.ClientKey, err = issue(3, ClientCertUser, x509.Certificate{KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		path *string
		name string
		data []byte
	}{
		{&p.CACertFile, "ca.crt", p.CACert},
		{&p.ServerCertFile, "server.crt", p.ServerCert},
		{&p.ServerKeyFile, "server.key", p.ServerKey},
		{&p.ClientCertFile, "client.crt", p.ClientCert},
		{&p.ClientKeyFile, "client.key", p.ClientKey},
	} {
		*f.path = filepath.Join(dir, f.name)
		if err := os.WriteFile(*f.path, f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Close removes the PKI's files.
func (p *PKI) Close() { _ = os.RemoveAll(p.Dir) }

// WithTLS adds a TLS port served with pki's server certificate. With requireClientCert the
// server refuses clients without a certificate signed by pki's CA (mutual TLS). The plain
// port stays open on loopback for the test's own assertions.
func WithTLS(pki *PKI, requireClientCert bool) Option {
	return func(s *Server) {
		port, err := FreePort()
		if err != nil {
			s.optErr = fmt.Errorf("tls port: %w", err)
			return
		}
		s.TLSPort = port
		auth := "no"
		if requireClientCert {
			auth = "yes"
		}
		s.args = append(s.args,
			"--tls-port", strconv.Itoa(port),
			"--tls-cert-file", pki.ServerCertFile,
			"--tls-key-file", pki.ServerKeyFile,
			"--tls-ca-cert-file", pki.CACertFile,
			"--tls-auth-clients", auth,
		)
	}
}

// TLSAddr is host:port of the TLS port.
func (s *Server) TLSAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.TLSPort)) }

// TLSURL is the valkeys:// URL of database 0 on the TLS port.
func (s *Server) TLSURL() string { return "valkeys://" + s.TLSAddr() + "/0" }
