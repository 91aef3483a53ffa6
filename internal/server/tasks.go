package server

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/mcptask"
)

// startTasks serves the MCP Tasks extension, when there are commands to make tasks of:
// it is advertised in server/discover (2026-07-28; initialize answers as before), tool
// calls that declare it may become tasks, and tasks/get, tasks/cancel and tasks/update
// answer about the tasks of the caller's session or workspace. Call it before adding
// httpCalls, so that a stateless request is bound to its workspace around all of it.
func (s *Server) startTasks() {
	if s.cfg.NoBash {
		return
	}
	s.tasks = mcptask.NewRegistry(mcptask.Limits{TTL: s.cfg.TaskTTL})
	if err := s.tasks.Serve(s.mcp, s.taskOwner); err != nil {
		panic(err) // a programmer mistake: a standard method's name
	}
	s.mcp.AddReceivingMiddleware(s.tasks.Calls(s.taskOwner), s.taskRequests, advertiseTasks)
}

// taskOwner is whose tasks a protocol session's requests see: its session's, or its
// stateless workspace's.
func (s *Server) taskOwner(ss *mcp.ServerSession) (mcptask.Owner, error) {
	return s.session(ss)
}

// taskRequests binds a stateless HTTP request for a task to its workspace, as httpCalls
// does a tool call: it sees that workspace's tasks, and keeps it from being idle.
func (s *Server) taskRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !strings.HasPrefix(method, "tasks/") {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if p := s.posts.of(req); p != nil && p.workspace != "" && ss != nil {
			release, err := s.workspaces.bind(ss, p.workspace, p.owner, nil)
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			defer release()
		}
		return next(ctx, method, req)
	}
}

// advertiseTasks lists the extension in server/discover's capabilities.
func advertiseTasks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if d, ok := res.(*mcp.DiscoverResult); ok && err == nil && d.Capabilities != nil {
			if d.Capabilities.Extensions == nil {
				d.Capabilities.Extensions = map[string]any{}
			}
			d.Capabilities.Extensions[mcptask.Extension] = map[string]any{}
		}
		return res, err
	}
}
