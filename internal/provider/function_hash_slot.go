package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

var _ function.Function = (*hashSlotFunction)(nil)

// NewHashSlotFunction returns the hash_slot provider function.
func NewHashSlotFunction() function.Function { return &hashSlotFunction{} }

type hashSlotFunction struct{}

func (f *hashSlotFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "hash_slot"
}

func (f *hashSlotFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The cluster hash slot of a key, as CLUSTER KEYSLOT answers it.",
		MarkdownDescription: "Returns the cluster hash slot (0 to 16383) of `key`, computed as `CLUSTER KEYSLOT` does: " +
			"CRC16/XMODEM modulo 16384 of the key's hashtag, the part between the first `{` and the first `}` after it " +
			"when that part is not empty, otherwise of the whole key. Keys with equal slots can be used together in " +
			"multi-key commands and transactions on a cluster. Computed locally: no server is contacted. " +
			"Terraform strings are Unicode text in NFC form, so keys holding other bytes cannot be expressed.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "key",
				MarkdownDescription: "The key, for example `emq:{orders}:stream:main`.",
			},
		},
		Return: function.Int64Return{},
	}
}

func (f *hashSlotFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var key string
	resp.Error = function.ConcatFuncErrors(resp.Error, req.Arguments.Get(ctx, &key))
	if resp.Error != nil {
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Error, resp.Result.Set(ctx, int64(valkey.HashSlot(key))))
}
