package browser

import "testing"

func TestBlockDNSArg(t *testing.T) {
	tests := []struct {
		name  string
		allow []string
		want  string
	}{
		{"nothing allowed", nil, "--host-resolver-rules=MAP * ~NOTFOUND"},
		{"one host", []string{"127.0.0.1"}, "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"},
		{"two hosts keep their order", []string{"127.0.0.1", "localhost"}, "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BlockDNSArg(tt.allow...); got != tt.want {
				t.Errorf("BlockDNSArg(%q) = %q, want %q", tt.allow, got, tt.want)
			}
		})
	}
}
