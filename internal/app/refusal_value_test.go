package app

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

func TestLoggedRefusalOfReadsTheTypedRow(t *testing.T) {
	row := models.Refusal{
		ID: 7, Tool: "fetch_url", Host: "intranet.corp", Port: 8080, Code: "forbidden", Reason: "not_allowlisted",
		Addresses: models.StringList{"10.1.2.3", "not-an-address", "fd00::7"}, Redirects: models.StringList{"http://a,b/"},
		RemedyKind: "add_entry", RemedyValue: "intranet.corp:8080", Proxied: true,
	}
	v := LoggedRefusalOf(row)
	if !v.Proxied {
		t.Error("a proxied row reads as a tool call")
	}
	if v.Remedy != guard.AddEntry("intranet.corp:8080") || v.Kind != guard.KindPolicy || v.Port != 8080 {
		t.Errorf("remedy %+v kind %q port %d", v.Remedy, v.Kind, v.Port)
	}
	if want := []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::7")}; !slices.Equal(v.Addresses, want) {
		t.Errorf("addresses %v, want %v (a stored value that is no address left out)", v.Addresses, want)
	}
	if !slices.Equal(v.Redirects, []string{"http://a,b/"}) {
		t.Errorf("redirects %q", v.Redirects)
	}
	row.RemedyKind, row.Kind = "reboot_the_internet", "network"
	if v := LoggedRefusalOf(row); v.Remedy.Kind != guard.RemedyNone || v.Kind != guard.KindNetwork {
		t.Errorf("an unknown remedy kind reads as %+v, kind %q; want none, network", v.Remedy, v.Kind)
	}
}

func TestConsoleWordingNamesTheConsolesControls(t *testing.T) {
	if got := ConsoleWording.Setting("max_bytes"); got != "Settings → Max bytes (max_bytes)" {
		t.Errorf("max_bytes is named %q", got)
	}
	if got := ConsoleWording.Setting("no_such_key"); got != "" {
		t.Errorf("an unknown key is named %q; the guard's neutral words should stand", got)
	}
	p, err := guard.NewPolicy(nil, guard.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	d := p.WithWording(ConsoleWording).Decide(t.Context(), nil, "http://example.com:8080/")
	want := "Open port 8080 in Settings → Allowed ports (ports), or add example.com:8080 as an internal host under Integrations → Outbound web access, which opens the port for that host alone and keeps the public web open."
	if d.Fix != want {
		t.Errorf("Fix = %q\nwant  %q", d.Fix, want)
	}
}
