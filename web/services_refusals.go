package web

import (
	"context"

	"github.com/outboundhq/outbound/models"
)

// RefusalReviewer is what the refusal log needs from the application
// layer: saving a review together with its audit record. The rules (which
// statuses, how long a comment) are the layer's; it answers a rejected
// review with app.ReviewProblems, by form field. *app.App implements it.
type RefusalReviewer interface {
	ReviewRefusal(ctx context.Context, actor string, id int64, status models.ReviewStatus, comment string) error
	ReviewRefusals(ctx context.Context, actor string, ids []int64, status models.ReviewStatus, comment string) (int, error)
}
