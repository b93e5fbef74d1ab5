package mad

import "context"

// SetPKeyBlockForTest writes one P_KeyTable block with a SubnSet.
//
// Test-only. ibkey never changes the fabric and nothing outside tests may
// call this: it exists to inject unusual tables into ibsim, which accepts
// SubnSet from any client, so tests can compare them with smpquery.
func SetPKeyBlockForTest(ctx context.Context, t Transport, a Address, port uint8, block uint16, entries [PKeysPerBlock]uint16) error {
	_, err := t.Do(ctx, Request{
		Addr: a, Class: ClassSubnLID, Method: MethodSet, Attr: AttrPKeyTable,
		Modifier: PKeyTableModifier(block, port), Data: EncodePKeyBlock(entries),
	})
	return err
}
