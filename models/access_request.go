package models

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// AccessRequestStatus is where an access request stands.
type AccessRequestStatus string

// The access request statuses.
const (
	AccessPending  AccessRequestStatus = "pending"
	AccessApproved AccessRequestStatus = "approved"
	AccessDeclined AccessRequestStatus = "declined"
)

// AccessRequest is a refusal turned into a request for access by support
// staff: the entry that would admit the request, for the agent and tool
// that were refused, with the requester's comment. An admin approves it
// (which adds the entry in that scope) or declines it with a reason.
type AccessRequest struct {
	ID          int64               `gorm:"primaryKey;autoIncrement"`
	RefusalID   int64               `gorm:"not null;index"`
	Entry       string              `gorm:"not null;default:''"`
	Host        string              `gorm:"not null;default:''"`
	Agent       string              `gorm:"not null;default:''"`
	Tool        string              `gorm:"not null;default:''"`
	Internal    bool                `gorm:"not null;default:false"`
	Comment     string              `gorm:"not null;default:''"`
	RequestedBy string              `gorm:"not null;default:''"`
	Status      AccessRequestStatus `gorm:"not null;default:'pending';index"`
	DecidedBy   string              `gorm:"not null;default:''"`
	// Outcome is the entry added, or the reason it was declined.
	Outcome   string    `gorm:"not null;default:''"`
	CreatedAt time.Time `gorm:"not null"`
	DecidedAt *time.Time
}

// CreateAccessRequest stores a pending request and marks its refusal
// "needs access" with the requester's comment, with the audit records, in
// one transaction. A refusal that already has a pending request is a
// *DuplicateError.
func (s *Store) CreateAccessRequest(ctx context.Context, req AccessRequest, audit ...Audit) (AccessRequest, error) {
	req.ID, req.Status, req.CreatedAt = 0, AccessPending, time.Now().UTC()
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&AccessRequest{}).Where("refusal_id = ? AND status = ?", req.RefusalID, AccessPending).Count(&n).Error; err != nil {
			return fmt.Errorf("models: reading access requests: %w", err)
		}
		if n > 0 {
			return &DuplicateError{Kind: "pending access request for refusal", Value: strconv.FormatInt(req.RefusalID, 10)}
		}
		res := tx.Model(&Refusal{}).Where("id = ?", req.RefusalID).Updates(map[string]any{
			"status": StatusNeedsAccess, "comment": req.Comment, "reviewed_by": req.RequestedBy, "reviewed_at": req.CreatedAt})
		if res.Error != nil {
			return fmt.Errorf("models: marking refusal %d: %w", req.RefusalID, res.Error)
		}
		if res.RowsAffected == 0 {
			return &NotFoundError{Kind: "refusal", Value: strconv.FormatInt(req.RefusalID, 10)}
		}
		if err := tx.Create(&req).Error; err != nil {
			return fmt.Errorf("models: storing the access request: %w", err)
		}
		return writeAudit(tx, audit)
	})
	return req, err
}

// ListAccessRequests returns the requests of a status (all when ""),
// newest first, at most limit.
func (s *Store) ListAccessRequests(ctx context.Context, status AccessRequestStatus, limit int) ([]AccessRequest, error) {
	var out []AccessRequest
	q := s.r.WithContext(ctx)
	if status != "" {
		q = q.Where("status = ?", status)
	}
	if err := q.Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: listing access requests: %w", err)
	}
	return out, nil
}

// AccessRequestByID returns one request, or a *NotFoundError.
func (s *Store) AccessRequestByID(ctx context.Context, id int64) (AccessRequest, error) {
	var rows []AccessRequest
	if err := s.r.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&rows).Error; err != nil {
		return AccessRequest{}, fmt.Errorf("models: reading access request %d: %w", id, err)
	}
	if len(rows) == 0 {
		return AccessRequest{}, &NotFoundError{Kind: "access request", Value: strconv.FormatInt(id, 10)}
	}
	return rows[0], nil
}

// AccessDecision closes a pending request.
type AccessDecision struct {
	ID      int64
	Status  AccessRequestStatus // AccessApproved or AccessDeclined
	By      string
	Outcome string
	// Review is the refusal's closing review: its status and comment.
	Review        ReviewStatus
	ReviewComment string
	// Add, for an approval, is the entry to add; added with the decision
	// in one transaction, under the allowlist's expected revision.
	Add *AllowlistEntry
}

// DecideAccessRequest closes request d.ID (which must be pending, or it is
// a *NotFoundError), closes its refusal's review, and for an approval adds
// d.Add to the allowlist, with the audit records, in one transaction. It
// returns the allowlist's new revision (unchanged for a decline).
func (s *Store) DecideAccessRequest(ctx context.Context, expectRevision int64, d AccessDecision, audit ...Audit) (int64, error) {
	now := time.Now().UTC()
	close := func(tx *gorm.DB) error {
		var req AccessRequest
		if err := tx.Where("id = ? AND status = ?", d.ID, AccessPending).Limit(1).Find(&req).Error; err != nil {
			return fmt.Errorf("models: reading access request %d: %w", d.ID, err)
		}
		if req.ID == 0 {
			return &NotFoundError{Kind: "pending access request", Value: strconv.FormatInt(d.ID, 10)}
		}
		if err := tx.Model(&AccessRequest{}).Where("id = ?", d.ID).Updates(map[string]any{
			"status": d.Status, "decided_by": d.By, "outcome": d.Outcome, "decided_at": now}).Error; err != nil {
			return fmt.Errorf("models: closing access request %d: %w", d.ID, err)
		}
		if err := tx.Model(&Refusal{}).Where("id = ?", req.RefusalID).Updates(map[string]any{
			"status": d.Review, "comment": d.ReviewComment, "reviewed_by": d.By, "reviewed_at": now}).Error; err != nil {
			return fmt.Errorf("models: closing the review of refusal %d: %w", req.RefusalID, err)
		}
		if d.Add != nil {
			return insertAllowlistRows(tx, []AllowlistEntry{*d.Add})
		}
		return nil
	}
	if d.Add == nil {
		err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := close(tx); err != nil {
				return err
			}
			return writeAudit(tx, audit)
		})
		return 0, err
	}
	return s.mutateConfig(ctx, SectionAllowlist, expectRevision, audit, close)
}

// CloseNeedsAccess closes the "needs access" reviews of refusals of host
// (and its pending access requests) once an admin allowed the host, with
// the audit records, in one transaction. It returns how many refusals it
// closed.
func (s *Store) CloseNeedsAccess(ctx context.Context, host, by, comment string, audit ...Audit) (int64, error) {
	now := time.Now().UTC()
	var n int64
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&Refusal{}).Where("host = ? AND status = ?", host, StatusNeedsAccess).Updates(map[string]any{
			"status": StatusReviewed, "comment": comment, "reviewed_by": by, "reviewed_at": now})
		if res.Error != nil {
			return fmt.Errorf("models: closing reviews of %s: %w", host, res.Error)
		}
		n = res.RowsAffected
		if err := tx.Model(&AccessRequest{}).Where("host = ? AND status = ?", host, AccessPending).Updates(map[string]any{
			"status": AccessApproved, "decided_by": by, "outcome": comment, "decided_at": now}).Error; err != nil {
			return fmt.Errorf("models: closing access requests of %s: %w", host, err)
		}
		if n == 0 {
			return nil
		}
		return writeAudit(tx, audit)
	})
	return n, err
}
