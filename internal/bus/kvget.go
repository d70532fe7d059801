package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KVRecord is the last record of a key in a KV bucket, as its stream
// stores it: a value, or a delete or purge marker (Op), at a revision.
type KVRecord struct {
	Value    []byte
	Revision uint64
	Op       jetstream.KeyValueOp
}

// LeaderGet reads the last record of key in bucket from the bucket
// stream's leader (a non-direct message get). A KeyValue's Get is a direct
// get, which any replica may answer, and a replica still catching up after
// a restart answers with an old record for as long as it lags; the leader
// has every acknowledged write. During an election there is no leader and
// LeaderGet fails (see GetLatest).
//
// A key without any record is jetstream.ErrKeyNotFound; a key whose last
// record is a delete or purge marker is jetstream.ErrKeyDeleted, returned
// with the marker's record (its revision).
func LeaderGet(ctx context.Context, js jetstream.JetStream, bucket, key string) (KVRecord, error) {
	ctx, cancel := withDefaultTimeout(ctx, js)
	defer cancel()
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$KV." + bucket + "." + key})
	msg, err := js.Conn().RequestWithContext(ctx, apiPrefix(js)+"STREAM.MSG.GET.KV_"+bucket, req)
	if err != nil {
		return KVRecord{}, fmt.Errorf("leader get %s/%s: %w", bucket, key, err)
	}
	// The message's data and headers arrive base64-encoded, which
	// encoding/json decodes into []byte.
	var res struct {
		Message *struct {
			Seq  uint64 `json:"seq"`
			Data []byte `json:"data"`
			Hdrs []byte `json:"hdrs"`
		} `json:"message"`
		Error *struct {
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &res); err != nil {
		return KVRecord{}, fmt.Errorf("leader get %s/%s: %w", bucket, key, err)
	}
	switch {
	case res.Error != nil && res.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return KVRecord{}, jetstream.ErrKeyNotFound
	case res.Error != nil:
		return KVRecord{}, fmt.Errorf("leader get %s/%s: %s (%d)", bucket, key, res.Error.Description, res.Error.ErrCode)
	case res.Message == nil:
		return KVRecord{}, fmt.Errorf("leader get %s/%s: empty answer", bucket, key)
	}
	rec := KVRecord{Value: res.Message.Data, Revision: res.Message.Seq, Op: jetstream.KeyValuePut}
	if len(res.Message.Hdrs) > 0 {
		h, err := nats.DecodeHeadersMsg(res.Message.Hdrs)
		if err != nil {
			return KVRecord{}, fmt.Errorf("leader get %s/%s: headers: %w", bucket, key, err)
		}
		rec.Op = KVOp(h)
	}
	if rec.Op != jetstream.KeyValuePut {
		return rec, jetstream.ErrKeyDeleted
	}
	return rec, nil
}

// withDefaultTimeout bounds a request of ctx without a deadline by js's
// default timeout (5 s when it has none).
func withDefaultTimeout(ctx context.Context, js jetstream.JetStream) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return RequestContext(ctx, js)
}

// KVOp reads the operation of a KV record from its headers, as
// nats.go does: a delete, a purge, or a server marker left by a per-key
// TTL or a purge.
func KVOp(h nats.Header) jetstream.KeyValueOp {
	switch h.Get("KV-Operation") {
	case "DEL":
		return jetstream.KeyValueDelete
	case "PURGE":
		return jetstream.KeyValuePurge
	}
	switch h.Get(jetstream.MarkerReasonHeader) {
	case "MaxAge", "Purge":
		return jetstream.KeyValuePurge
	case "Remove":
		return jetstream.KeyValueDelete
	}
	return jetstream.KeyValuePut
}

// apiPrefix is the JetStream API prefix js sends its requests to.
func apiPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	}
	return jetstream.DefaultAPIPrefix
}

// LeaderGetWait bounds GetLatest's wait for the stream leader.
const LeaderGetWait = 2 * time.Second

// GetLatest reads key's last record from the stream leader (LeaderGet)
// and, when the leader does not answer (an election, a node restarting),
// from kv with a direct get that any replica may answer. leader reports
// which answered: a direct get's record may be older than the latest one,
// never newer. Missing and deleted keys are as for LeaderGet; a deleted
// key read by a direct get has no revision.
func GetLatest(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue, key string) (rec KVRecord, leader bool, err error) {
	// A leader that just died may leave the request unanswered until its
	// timeout: keep the wait short, the direct get is the fallback.
	lctx, cancel := context.WithTimeout(ctx, LeaderGetWait)
	rec, err = LeaderGet(lctx, js, kv.Bucket(), key)
	cancel()
	switch {
	case err == nil || errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		return rec, true, err
	case ctx.Err() != nil:
		return KVRecord{}, false, err
	}
	e, derr := kv.Get(ctx, key)
	if derr != nil {
		if errors.Is(derr, jetstream.ErrKeyNotFound) {
			return KVRecord{}, false, derr
		}
		return KVRecord{}, false, errors.Join(err, derr)
	}
	return KVRecord{Value: e.Value(), Revision: e.Revision(), Op: e.Operation()}, false, nil
}

// maxMultiLast is the most subjects DirectGetLast asks for in one request
// (the server answers at most 1,024).
const maxMultiLast = 1000

// DirectGetLast reads the last message of each of subjects in stream with
// batch direct gets (`multi_last`), a request per 1,000 subjects instead
// of one per subject, and calls fn for each message found, with the
// operation its KV headers mark (a put, or a delete or purge marker).
// Subjects without a message are not reported. Like every direct get, any
// replica of the stream may answer. The stream must allow direct gets; a
// server that does not answer them fails the call (no responders).
func DirectGetLast(ctx context.Context, js jetstream.JetStream, stream string, subjects []string, fn func(subject string, seq uint64, op jetstream.KeyValueOp, data []byte)) error {
	ctx, cancel := withDefaultTimeout(ctx, js)
	defer cancel()
	api := apiPrefix(js) + "DIRECT.GET." + stream
	for len(subjects) > 0 {
		chunk := subjects[:min(len(subjects), maxMultiLast)]
		subjects = subjects[len(chunk):]
		if err := directGetChunk(ctx, js.Conn(), api, chunk, fn); err != nil {
			return fmt.Errorf("direct get %s: %w", stream, err)
		}
	}
	return nil
}

func directGetChunk(ctx context.Context, nc *nats.Conn, api string, subjects []string, fn func(string, uint64, jetstream.KeyValueOp, []byte)) error {
	inbox := nc.NewInbox()
	// The answer is at most a message per subject and an end marker, so a
	// channel of that size never drops one; SubscribeSync's channel would
	// take 512 KiB for each request.
	// A wildcard subject may match up to the server's limit of 1,024.
	size := len(subjects) + 2
	for _, s := range subjects {
		if strings.ContainsAny(s, "*>") {
			size = 1024 + 2
			break
		}
	}
	ch := make(chan *nats.Msg, size)
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	req, err := json.Marshal(struct {
		MultiLast []string `json:"multi_last"`
	}{subjects})
	if err != nil {
		return err
	}
	if err := nc.PublishRequest(api, inbox, req); err != nil {
		return err
	}
	for {
		var m *nats.Msg
		select {
		case m = <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		if status := m.Header.Get("Status"); status != "" {
			desc := m.Header.Get("Description")
			switch {
			case status == "204": // end of the batch
				return nil
			case status == "404" && desc == "No Results": // none of the subjects has a message
				return nil
			case status == "503":
				return nats.ErrNoResponders
			}
			return fmt.Errorf("%s %s", status, desc)
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return fmt.Errorf("answer without a sequence: %w", err)
		}
		fn(m.Header.Get(jetstream.SubjectHeader), seq, KVOp(m.Header), m.Data)
	}
}
