package server

// stateSubdir is the directory of --state-dir that holds what a Boris started again on the
// same state directory (a sandbox resumed after a suspend) knows: the claim /init made,
// and the workspaces of stateless requests with their tasks.
const stateSubdir = "workspaces"
