#!/bin/sh
# Builds kube-apiserver and etcd from the Go module proxy into a cache directory,
# for TestManifestsOnAPIServer in the deploy module. What is already built is kept.
#
#   deploy/kube/build.sh            # into ${BORIS_KUBE_CACHE:-$HOME/.cache/boris-kube}/v1.36.3
#
# The builder modules are written into the cache directory, not into this repository,
# so the deploy module does not depend on Kubernetes' server code.
set -eu

KUBE_VERSION=v1.36.3
STAGING_VERSION=v0.36.3
ETCD_VERSION=v3.6.8

cache=${BORIS_KUBE_CACHE:-$HOME/.cache/boris-kube}
out=$cache/$KUBE_VERSION
mkdir -p "$out"

# The staging modules that k8s.io/kubernetes replaces with ./staging paths in its own
# go.mod; a module that requires k8s.io/kubernetes must name their published versions.
staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
cloud-provider cluster-bootstrap code-generator component-base component-helpers
controller-manager cri-api cri-client cri-streaming csi-translation-lib
dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics mount-utils
pod-security-admission sample-apiserver sample-cli-plugin sample-controller streaming"

export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=${GOTOOLCHAIN:-auto}

if [ -x "$out/kube-apiserver" ]; then
	echo "kube-apiserver $KUBE_VERSION: already built in $out"
else
	src=$out/src/kube-apiserver
	rm -rf "$src" && mkdir -p "$src"
	{
		echo "module boris.local/kube-apiserver-builder"
		echo
		echo "go 1.26"
		echo
		echo "require k8s.io/kubernetes $KUBE_VERSION"
		echo
		echo "replace ("
		for m in $staging; do
			echo "	k8s.io/$m => k8s.io/$m $STAGING_VERSION"
		done
		echo ")"
	} >"$src/go.mod"
	# Names the command for go mod tidy; never compiled.
	printf '//go:build tools\n\npackage main\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' >"$src/tools.go"
	v=k8s.io/component-base/version
	ldflags="-s -w -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=36 -X $v.gitTreeState=clean"
	ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
	echo "building kube-apiserver $KUBE_VERSION (12 to 35 minutes on 2 cores)"
	start=$(date +%s)
	(cd "$src" && go mod tidy && go build -ldflags "$ldflags" -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
	mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
	echo "kube-apiserver built in $(($(date +%s) - start)) s"
fi

if [ -x "$out/etcd" ]; then
	echo "etcd $ETCD_VERSION: already built in $out"
else
	src=$out/src/etcd
	rm -rf "$src" && mkdir -p "$src"
	printf 'module boris.local/etcd-builder\n\ngo 1.26\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >"$src/go.mod"
	cat >"$src/main.go" <<'GO'
// Command etcd is etcd's own server command, built from go.etcd.io/etcd/server/v3.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
	echo "building etcd $ETCD_VERSION"
	start=$(date +%s)
	(cd "$src" && go mod tidy && go build -ldflags "-s -w" -o "$out/etcd.tmp" .)
	mv "$out/etcd.tmp" "$out/etcd"
	echo "etcd built in $(($(date +%s) - start)) s"
fi

"$out/kube-apiserver" --version
"$out/etcd" --version | head -1
