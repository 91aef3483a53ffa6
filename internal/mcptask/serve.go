package mcptask

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serve adds tasks/get, tasks/cancel and tasks/update to s, each answering only about
// the tasks of the requesting session's owner, and only to a request that declares the
// extension.
func (r *Registry) Serve(s *mcp.Server, owner OwnerFunc) error {
	methods := map[string]func(Owner, string) (mcp.Result, error){
		"tasks/get":    func(o Owner, id string) (mcp.Result, error) { return r.Get(o, id) },
		"tasks/cancel": func(o Owner, id string) (mcp.Result, error) { return r.Cancel(o, id) },
		"tasks/update": func(o Owner, id string) (mcp.Result, error) { return r.Update(o, id) },
	}
	for method, do := range methods {
		err := mcp.AddReceivingCustomMethod(s, method, func(_ context.Context, ss *mcp.ServerSession, p *TaskParams) (mcp.Result, error) {
			if p == nil || !Declared(p.Meta) {
				return nil, errMissing()
			}
			if p.TaskID == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is missing"}
			}
			o, err := owner(ss)
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			return do(o, p.TaskID)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Calls returns middleware that offers each tool call declaring the extension the chance
// to become a task ([OfferFrom]); a call that accepts is answered with the task. When no
// task can be added (its owner has too many), the call's own result stands.
func (r *Registry) Calls(owner OwnerFunc) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" || call.Params == nil || !Declared(call.Params.GetMeta()) {
				return next(ctx, method, req)
			}
			ctx, offer := WithOffer(ctx)
			res, err := next(ctx, method, req)
			local, w := offer.Accepted()
			if err != nil || w == nil {
				return res, err
			}
			o, err := owner(call.Session)
			if err != nil {
				return res, nil
			}
			if created, err := r.Add(o, local, w); err == nil {
				return created, nil
			}
			return res, nil
		}
	}
}
