package alerts

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/pb33f/jsonschema/v6"
)

// TestWebhookSchema validates the generic webhook's payload of every
// event, hostile names included, against webhook.schema.json.
func TestWebhookSchema(t *testing.T) {
	raw, err := os.ReadFile("webhook.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("webhook.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("webhook.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(sampleEvents(), hostileEvents()...) {
		body := Render(DestWebhook, e).Body
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s %s: %v", e.Kind, e.Watch, err)
		}
	}
	// And the schema refuses what it should.
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{"type":"server.sideways","timestamp":"x","data":{}}`)))
	if sch.Validate(v) == nil {
		t.Error("the schema takes a bad payload")
	}
}

// TestSchemaEnums keeps the schema's lists of event types and states
// those of the package.
func TestSchemaEnums(t *testing.T) {
	raw, err := os.ReadFile("webhook.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
			Data struct {
				Properties struct {
					State struct {
						Enum []string `json:"enum"`
					} `json:"state"`
				} `json:"properties"`
			} `json:"data"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, k := range Kinds() {
		kinds = append(kinds, "server."+string(k))
	}
	if !slices.Equal(s.Properties.Type.Enum, kinds) {
		t.Errorf("schema types %v, package %v", s.Properties.Type.Enum, kinds)
	}
	states := []string{StateOnline, StateRateLimited, StateBanned, StateOffline, StateMalformed, StateRefused, StateLimited, StateUnreachable}
	if !slices.Equal(s.Properties.Data.Properties.State.Enum, states) {
		t.Errorf("schema states %v, package %v", s.Properties.Data.Properties.State.Enum, states)
	}
}
