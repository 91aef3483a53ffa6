package server

import (
	"encoding/json"
	"testing"
)

// TestClassify checks the scanning classifier against decoding, on messages whose ids
// and methods hide in strings, escapes and nested values.
func TestClassify(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo \"}\" '{'"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method \"id\" not found"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":3,"method":"nested"}}`,
		`{"params":{"id":1},"method":"x","jsonrpc":"2.0"}`,
		`  { "id" : 5 , "method" : "ping" }  `,
		`{"\u0069d":9,"method":"ping"}`,
		`{"id":1,"result":{"content":[{"type":"text","text":"\\\" id \\"}],"id":2}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"result":{}}]`,
		`[]`,
		`{}`,
		`"id"`,
	}
	for _, line := range lines {
		wantQ, wantR := decodeClassify(t, []byte(line))
		if q, r := classify([]byte(line)); q != wantQ || r != wantR {
			t.Errorf("classify(%s) = %d requests, %d replies; want %d, %d", line, q, r, wantQ, wantR)
		}
	}
}

// decodeClassify is classify done by decoding: the reference.
func decodeClassify(t *testing.T, line []byte) (requests, replies int) {
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) == nil {
		for _, m := range batch {
			q, r := decodeClassify(t, m)
			requests, replies = requests+q, replies+r
		}
		return requests, replies
	}
	var one struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if err := json.Unmarshal(line, &one); err != nil || len(one.ID) == 0 || string(one.ID) == "null" {
		return 0, 0
	}
	if one.Method != nil {
		return 1, 0
	}
	return 0, 1
}
