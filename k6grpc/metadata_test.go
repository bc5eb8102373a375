package k6grpc

import (
	"context"
	"reflect"
	"testing"

	"google.golang.org/grpc/metadata"
)

// TestIncomingBaggage: the metadata is read in place under the key learnt
// from grpc-go, with the same answer as metadata.ValueFromIncomingContext
// for the lowercase keys grpc-go delivers, and without an allocation.
func TestIncomingBaggage(t *testing.T) {
	if incomingKey == nil {
		t.Fatal("the incoming metadata key was not learnt: every call with baggage pays for a copy")
	}
	for _, md := range []metadata.MD{
		nil,
		metadata.Pairs("user-agent", "grpc-go"),
		metadata.Pairs("baggage", "k6.scenario=s", "baggage", "a=1"),
	} {
		ctx := context.Background()
		if md != nil {
			ctx = metadata.NewIncomingContext(ctx, md)
		}
		want := metadata.ValueFromIncomingContext(ctx, baggageKey)
		if got := incomingBaggage(ctx); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: incomingBaggage = %q, want %q", md, got, want)
		}
		if n := testing.AllocsPerRun(10, func() { incomingBaggage(ctx) }); n != 0 {
			t.Errorf("%v: %v allocations, want 0", md, n)
		}
	}
}

// A key with an uppercase letter never comes from the wire (HTTP/2 rejects
// the header), so only a hand-built MD has one: it is not looked for, which
// spares every call without baggage a loop over its keys.
func TestIncomingBaggageLowercaseOnly(t *testing.T) {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.MD{"Baggage": {"k6.name=n"}, "user-agent": {"x"}})
	if got := incomingBaggage(ctx); got != nil {
		t.Errorf("incomingBaggage = %q, want nil for a hand-built uppercase key", got)
	}
}

// TestLearnIncomingKey: a lookup that does not read the metadata from the
// context teaches no key, and incomingBaggage then asks grpc-go.
func TestLearnIncomingKey(t *testing.T) {
	if k := learnIncomingKey(func(context.Context, string) []string { return []string{"probe"} }); k != nil {
		t.Errorf("learnt key %v from a lookup that never asked the context", k)
	}
	if k := learnIncomingKey(func(context.Context, string) []string { return nil }); k != nil {
		t.Errorf("learnt key %v from a lookup that found nothing", k)
	}
	saved := incomingKey
	defer func() { incomingKey = saved }()
	incomingKey = nil
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("baggage", "k6.scenario=s"))
	if got := incomingBaggage(ctx); len(got) != 1 || got[0] != "k6.scenario=s" {
		t.Errorf("without a key: incomingBaggage = %q", got)
	}
}
