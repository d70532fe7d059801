package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// LeaderGet reads the current value of a KV key from the bucket stream's
// leader. A KeyValue's Get is a direct get, which any replica may answer,
// and a replica that is still catching up after a restart answers with an
// old value for as long as it lags. Readers that follow a value until it
// changes (a run's progress) use this instead. A missing or deleted key is
// jetstream.ErrKeyNotFound.
func LeaderGet(ctx context.Context, js jetstream.JetStream, bucket, key string) ([]byte, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$KV." + bucket + "." + key})
	msg, err := js.Conn().RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, req)
	if err != nil {
		return nil, fmt.Errorf("get %s/%s: %w", bucket, key, err)
	}
	// The message's data and headers arrive base64-encoded, which
	// encoding/json decodes into []byte.
	var res struct {
		Message *struct {
			Data []byte `json:"data"`
			Hdrs []byte `json:"hdrs"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &res); err != nil {
		return nil, fmt.Errorf("get %s/%s: %w", bucket, key, err)
	}
	switch {
	case res.Error != nil && res.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return nil, jetstream.ErrKeyNotFound
	case res.Error != nil:
		return nil, fmt.Errorf("get %s/%s: %s (%d)", bucket, key, res.Error.Description, res.Error.ErrCode)
	case res.Message == nil:
		return nil, fmt.Errorf("get %s/%s: empty answer", bucket, key)
	}
	if h := string(res.Message.Hdrs); strings.Contains(h, "KV-Operation: DEL") || strings.Contains(h, "KV-Operation: PURGE") {
		return nil, jetstream.ErrKeyNotFound
	}
	return res.Message.Data, nil
}
