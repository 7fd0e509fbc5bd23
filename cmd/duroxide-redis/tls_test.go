package main

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
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// TestTLS runs the command over rediss:// against a redis-server serving
// TLS only, with a CA made for the test: trusted through --tls-ca it works;
// without it the command says the certificate is not trusted.
func TestTLS(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH")
	}
	dir := t.TempDir()
	writeTestPKI(t, dir)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", filepath.Join(dir, "server.pem"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.pem"), "--tls-auth-clients", "no", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	url := fmt.Sprintf("rediss://127.0.0.1:%d/0", port)
	env := map[string]string{"DUROXIDE_REDIS_URL": url}
	ca := filepath.Join(dir, "ca.pem")

	var r result
	durabletest.Eventually(t, "the command reaching the TLS server", func() (bool, error) { // it needs a moment to listen
		if r = runCLI(env, "stats", "--json", "--tls-ca", ca); r.code != exitOK {
			return false, fmt.Errorf("exit %d: %s", r.code, r.stderr)
		}
		return true, nil
	})
	if s := decode[statsJSON](t, r); s.Instances != 0 {
		t.Errorf("fresh server: %+v", s)
	}
	expectFailure(t, runCLI(env, "stats"), exitFailure, "--tls-ca FILE")
	plain := map[string]string{"DUROXIDE_REDIS_URL": fmt.Sprintf("redis://127.0.0.1:%d/0", port)}
	expectFailure(t, runCLI(plain, "stats", "--tls-ca", ca), exitInvalid, "--tls-ca needs rediss:// URLs")
}

// writeTestPKI writes ca.pem, and server.pem / server.key for 127.0.0.1
// signed by it.
func writeTestPKI(t *testing.T, dir string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "duroxide-redis test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caTmpl, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.pem":     {Type: "CERTIFICATE", Bytes: caDER},
		"server.pem": {Type: "CERTIFICATE", Bytes: srvDER},
		"server.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
