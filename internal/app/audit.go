package app

// Audit action names: what the audit trail's Action column says. They are
// part of the product's record (admins filter and read them), so they are
// named once, here, and every operation that changes something writes its
// record through the store in the change's own transaction.
const (
	ActionAllowlistAdd      = "allowlist.add"
	ActionAllowlistRemove   = "allowlist.remove"
	ActionAllowlistNote     = "allowlist.note"
	ActionSettingsSet       = "settings.set"
	ActionTokenCreate       = "token.create"
	ActionTokenRevoke       = "token.revoke"
	ActionUserAdd           = "user.add"
	ActionUserRole          = "user.role"
	ActionUserPassword      = "user.password"
	ActionUserRemove        = "user.remove"
	ActionIntegrationAdd    = "integration.add"
	ActionIntegrationUpdate = "integration.update"
	ActionIntegrationDelete = "integration.delete"
	ActionRefusalReview     = "refusal.review"
	ActionAllowlistEnforce  = "allowlist.enforce"
	ActionAccessRequest     = "access.request"
	ActionAccessApprove     = "access.approve"
	ActionAccessDecline     = "access.decline"
	ActionPreview           = "preview.read"
)
