package valkey

import (
	"crypto/tls"
	"crypto/x509"
	"os"
)

// config builds the tls.Config, reading files now so that a wrong path is reported when the
// client is made rather than on the first command. A nil t means no TLS settings.
func (t *TLSOptions) config() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // the user asked for it, in so many words.
	}
	caPEM, err := pemFrom("TLS.CACert", t.CACert, t.CACertFile)
	if err != nil {
		return nil, err
	}
	if caPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, &OptionError{Field: "TLS.CACert", Reason: "holds no PEM certificate"}
		}
		cfg.RootCAs = pool
	}
	certPEM, err := pemFrom("TLS.Cert", t.Cert, t.CertFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := pemFrom("TLS.Key", t.Key, t.KeyFile)
	if err != nil {
		return nil, err
	}
	switch {
	case certPEM != nil && keyPEM != nil:
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// The library's words name no secret, only what is wrong with the PEM blocks.
			return nil, &OptionError{Field: "TLS.Cert", Reason: "does not form a key pair with the key: " + err.Error()}
		}
		cfg.Certificates = []tls.Certificate{pair}
	case certPEM != nil:
		return nil, &OptionError{Field: "TLS.Key", Reason: "is not set, but a client certificate is: a client certificate needs both"}
	case keyPEM != nil:
		return nil, &OptionError{Field: "TLS.Cert", Reason: "is not set, but a client key is: a client certificate needs both"}
	}
	return cfg, nil
}

// pemFrom is the PEM given inline or in a file, for the field (such as "TLS.CACert") whose
// file form is field+"File".
func pemFrom(field, inline, file string) ([]byte, error) {
	switch {
	case inline != "" && file != "":
		return nil, &OptionError{Field: field, Reason: "is set both inline (PEM) and as a file: use one"}
	case inline != "":
		return []byte(inline), nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, &OptionError{Field: field + "File", Reason: "cannot be read: " + err.Error()}
		}
		return b, nil
	}
	return nil, nil
}
