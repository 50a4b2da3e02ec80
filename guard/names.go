package guard

import "strings"

// Internal host names are refused whatever they resolve to: their meaning
// depends on the network the guard runs in, not on public DNS, so a stranger
// who writes one into an email is aiming at our side of the firewall.
//
// Sources, checked on 2026-11-30: RFC 6761 (localhost), RFC 6762 (.local),
// RFC 8375 (home.arpa), ICANN's 2024 reservation of .internal for private
// use, and the cloud providers' metadata host names.

// internalSuffixes are the suffixes (with their leading dot) of names that
// only mean something inside a private network.
var internalSuffixes = []string{
	".localhost",
	".local",
	".internal",
	".localdomain",
	".home.arpa",
}

// metadataNames name cloud metadata services. Unlike other internal names,
// no host-name allowlist entry unlocks them; only a literal IP entry for
// the endpoint's address does.
var metadataNames = map[string]string{
	"metadata":                   "GCP and Azure metadata service",
	"metadata.google.internal":   "GCP metadata service",
	"metadata.goog":              "GCP metadata service",
	"instance-data":              "AWS metadata service",
	"instance-data.ec2.internal": "AWS metadata service",
}

// nameClass says whether a normalised DNS name is internal, and why.
type nameClass struct {
	internal bool
	metadata bool
	why      string
}

// classifyName reports whether a normalised name (lower case, no trailing
// dot) is internal. It does not allocate.
func classifyName(name string) nameClass {
	if what, ok := metadataNames[name]; ok {
		return nameClass{internal: true, metadata: true, why: "the name of the " + what}
	}
	if name == "localhost" {
		return nameClass{internal: true, why: "the loopback name"}
	}
	for _, suffix := range internalSuffixes {
		if strings.HasSuffix(name, suffix) {
			return nameClass{internal: true, why: "an internal name under " + suffix}
		}
	}
	if !strings.Contains(name, ".") {
		return nameClass{internal: true, why: "a single-label name that only resolves inside a local network"}
	}
	return nameClass{}
}
