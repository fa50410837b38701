package evidence

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

// TestRecordTypesMatchBindings holds the record types the store binds rows
// to (store.Record*) to the ones this package writes.
func TestRecordTypesMatchBindings(t *testing.T) {
	for _, c := range [][2]string{
		{store.RecordSession, TypeSession}, {store.RecordSessionStatus, TypeSessionStatus},
		{store.RecordMandate, TypeMandate}, {store.RecordDecision, TypeDecision},
		{store.RecordObservation, TypeObservation}, {store.RecordApproval, TypeApproval},
		{store.RecordApprovalState, TypeApprovalState},
		{store.RecordToolPin, TypeToolPin}, {store.RecordToolChange, TypeToolChange},
	} {
		if c[0] != c[1] {
			t.Errorf("store binds %q, evidence writes %q", c[0], c[1])
		}
	}
}
