package mcptask

import "github.com/modelcontextprotocol/go-sdk/mcp"

// Task statuses.
const (
	Working   = "working"
	Completed = "completed"
	Cancelled = "cancelled"
)

// Task is a task's state as the extension's results carry it.
type Task struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          int64  `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

// CreateTaskResult answers a tool call that became a task (resultType "task").
type CreateTaskResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	Task
}

// GetTaskResult answers tasks/get: the task, and its result once completed.
type GetTaskResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	Task
	Result *mcp.CallToolResult `json:"result,omitempty"`
}

// AckResult answers tasks/cancel and tasks/update.
type AckResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// TaskParams are the parameters of tasks/get, tasks/cancel and tasks/update.
type TaskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
	// InputResponses (tasks/update) answer requests a task made of the client; Boris's
	// tasks make none.
	InputResponses map[string]any `json:"inputResponses,omitempty"`
}
