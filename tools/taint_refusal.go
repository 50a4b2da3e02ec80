package tools

import "github.com/outboundhq/outbound/guard"

// unrecordedRefusal replaces the answer of a call that brought web
// content into a conversation whose mark the store could not keep. The
// content is withheld: handed over, it could steer the conversation's
// next side effect through another replica, which asks the store, finds
// nothing and lets it go ahead without a person's confirmation. Failing
// closed costs the agent a retry; the answer's URL is kept for the record.
func unrecordedRefusal(tool string, res Result) Result {
	url := res.URL
	if url == "" && res.Refusal != nil {
		url = res.Refusal.URL
	}
	r := &guard.Refusal{Code: guard.CodeUnreachable, Reason: ReasonUnrecorded, Kind: guard.KindNetwork, Tool: tool, URL: url,
		Message: "The answer is withheld: the console's database did not record that this conversation has read the web, which every replica must know before the content reaches the agent.",
		Fix:     "Retry in a moment; if it keeps failing, an admin checks the console's database (its /healthz)."}
	return Result{Refusal: r, Text: RefusalAnswer(tool, r), API: refusedAPI{Error: r, Answer: RefusalAnswer(tool, r)}, URL: res.URL, Redirects: res.Redirects}
}
