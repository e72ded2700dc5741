// A Go program with golem's persisted message types, declared from the history contract
// (spec §1.1: field order, JSON names, omitempty, json.RawMessage args). It reads a history
// with encoding/json and writes it back with json.Marshal: what a Go golem program would do.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

type Part struct {
	Kind      string `json:"kind"`
	URL       string `json:"url,omitempty"`
	Data      []byte `json:"data,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
}

type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	Signature string          `json:"signature,omitempty"`
}

type ThinkingBlock struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

type Message struct {
	Role           string          `json:"role"`
	Content        string          `json:"content,omitempty"`
	Parts          []Part          `json:"parts,omitempty"`
	ToolCalls      []ToolCall      `json:"toolCalls,omitempty"`
	ToolCallID     string          `json:"toolCallId,omitempty"`
	ToolName       string          `json:"toolName,omitempty"`
	Failed         bool            `json:"failed,omitempty"`
	Thinking       []ThinkingBlock `json:"thinking,omitempty"`
	RunID          string          `json:"runId,omitempty"`
	ConversationID string          `json:"conversationId,omitempty"`
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var history []Message
	if err := json.Unmarshal(data, &history); err != nil {
		fmt.Fprintln(os.Stderr, "unmarshal:", err)
		os.Exit(1)
	}
	out, err := json.Marshal(history)
	if err != nil {
		fmt.Fprintln(os.Stderr, "marshal:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
