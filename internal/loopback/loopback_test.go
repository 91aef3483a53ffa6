package loopback

import "testing"

func TestHost(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true,
		"": false, "0.0.0.0": false, "::": false, "example.com": false, "10.0.0.1": false, "localhost.example.com": false,
	} {
		if got := Host(h); got != want {
			t.Errorf("Host(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestHostPort(t *testing.T) {
	for hp, want := range map[string]bool{
		"localhost:8080": true, "127.0.0.1:1": true, "[::1]:8080": true, "[::1]": true, "localhost": true,
		"example.com:8080": false, "0.0.0.0:80": false, "[::]:80": false, "evil.com": false,
	} {
		if got := HostPort(hp); got != want {
			t.Errorf("HostPort(%q) = %v, want %v", hp, got, want)
		}
	}
}
