package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Integration is an admin-defined HTTP integration as stored. The store
// does not interpret it: the tools validate and run it. A secret header's
// Value is already sealed by the caller; this package never sees a
// plaintext secret. Changes bump the configuration revision, so every
// process serving the tools reloads them.
type Integration struct {
	ID           int64               `gorm:"primaryKey"`
	Name         string              `gorm:"not null;uniqueIndex"`
	Description  string              `gorm:"not null;default:''"`
	Method       string              `gorm:"not null"`
	URLTemplate  string              `gorm:"not null"`
	Headers      []IntegrationHeader `gorm:"serializer:json;not null"`
	BodyTemplate string              `gorm:"not null;default:''"`
	Params       []IntegrationParam  `gorm:"serializer:json;not null"`
	UpdatedBy    string              `gorm:"not null;default:''"`
	CreatedAt    time.Time           `gorm:"not null"`
	UpdatedAt    time.Time           `gorm:"not null"`
}

// IntegrationHeader is one header. When Secret is set, Value is sealed.
type IntegrationHeader struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Secret bool   `json:"secret,omitempty"`
}

// IntegrationParam is one parameter: its name, JSON type, whether it is
// required, and what the agent should pass.
type IntegrationParam struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
}

// ListIntegrations returns every integration ordered by name.
func (s *Store) ListIntegrations(ctx context.Context) ([]Integration, error) {
	var out []Integration
	if err := s.r.WithContext(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: listing integrations: %w", err)
	}
	return out, nil
}

// IntegrationByName returns the integration called name, or a
// *NotFoundError.
func (s *Store) IntegrationByName(ctx context.Context, name string) (Integration, error) {
	var in Integration
	err := s.r.WithContext(ctx).Where("name = ?", name).Take(&in).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return in, &NotFoundError{Kind: "integration", Value: name}
	}
	if err != nil {
		return in, fmt.Errorf("models: reading integration %q: %w", name, err)
	}
	return in, nil
}

// CreateIntegration adds in with the revision bump. A name already taken
// is a *DuplicateError. It returns the new revision.
func (s *Store) CreateIntegration(ctx context.Context, expectRevision int64, in Integration, audit ...Audit) (int64, error) {
	if in.Name == "" {
		return 0, fmt.Errorf("models: an integration needs a name")
	}
	in.ID = 0
	return s.mutateConfig(ctx, SectionIntegrations, expectRevision, audit, func(tx *gorm.DB) error {
		if err := tx.Create(&in).Error; err != nil {
			if isUniqueViolation(err) {
				return &DuplicateError{Kind: "integration", Value: in.Name}
			}
			return fmt.Errorf("models: adding integration %q: %w", in.Name, err)
		}
		return nil
	})
}

// UpdateIntegration replaces the integration called name with in, which
// may carry a new name. A missing integration is a *NotFoundError; a new
// name already taken is a *DuplicateError. It returns the new revision.
func (s *Store) UpdateIntegration(ctx context.Context, expectRevision int64, name string, in Integration, audit ...Audit) (int64, error) {
	if in.Name == "" {
		return 0, fmt.Errorf("models: an integration needs a name")
	}
	return s.mutateConfig(ctx, SectionIntegrations, expectRevision, audit, func(tx *gorm.DB) error {
		var old Integration
		err := tx.Where("name = ?", name).Take(&old).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return &NotFoundError{Kind: "integration", Value: name}
		}
		if err != nil {
			return fmt.Errorf("models: reading integration %q: %w", name, err)
		}
		in.ID, in.CreatedAt = old.ID, old.CreatedAt
		if err := tx.Save(&in).Error; err != nil {
			if isUniqueViolation(err) {
				return &DuplicateError{Kind: "integration", Value: in.Name}
			}
			return fmt.Errorf("models: saving integration %q: %w", in.Name, err)
		}
		return nil
	})
}

// DeleteIntegration removes the integration called name, or returns a
// *NotFoundError. It returns the new revision.
func (s *Store) DeleteIntegration(ctx context.Context, expectRevision int64, name string, audit ...Audit) (int64, error) {
	return s.mutateConfig(ctx, SectionIntegrations, expectRevision, audit, func(tx *gorm.DB) error {
		res := tx.Where("name = ?", name).Delete(&Integration{})
		if res.Error != nil {
			return fmt.Errorf("models: removing integration %q: %w", name, res.Error)
		}
		if res.RowsAffected == 0 {
			return &NotFoundError{Kind: "integration", Value: name}
		}
		return nil
	})
}
