package server

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"os"
)

// loadFunc reads a standalone source's whole input.
type loadFunc func() (map[string]PoolState, error)

// runStandalone loads once (failing if that fails: a server that starts with nothing to serve
// is a misconfiguration), then reloads whenever a file under paths changes. A failed reload is
// logged and the previous pools keep being served: a half-written file must not take every
// pool down.
func runStandalone(ctx context.Context, store *Store, load loadFunc, paths []string, log *slog.Logger) error {
	pools, err := load()
	if err != nil {
		return err
	}
	store.Replace(pools)
	log.Info("loaded pools", "pools", store.Pools())
	return watchFiles(ctx, paths, func() {
		pools, err := load()
		if err != nil {
			log.Error("reload failed; still serving the previous configs", "err", err)
			return
		}
		store.Replace(pools)
		log.Info("reloaded pools", "pools", store.Pools())
	}, log)
}

// standaloneInputs are what both standalone modes serve besides their directory's configs: the
// bootstrap kubeconfig, the tokens per pool and the pull secret, from the files the flags name.
type standaloneInputs struct {
	kubeconfig, pullSecret []byte
	tokens                 map[string]PoolTokens
}

func readStandaloneInputs(kubeconfigFile, tokensFile, pullSecretFile string) (in standaloneInputs, err error) {
	if in.kubeconfig, err = readOptional(kubeconfigFile); err != nil {
		return in, err
	}
	if in.tokens, err = LoadTokensFile(tokensFile); err != nil {
		return in, err
	}
	in.pullSecret, err = ReadPullSecretFile(pullSecretFile)
	return in, err
}

// serve gives every pool of states the inputs with the kubelet CA, as served extras, and its
// tokens.
func (in standaloneInputs) serve(states map[string]PoolState, kubeletCA []byte) {
	extras := Extras{KubeletCA: kubeletCA, Kubeconfig: in.kubeconfig, PullSecret: in.pullSecret}
	key := extras.key()
	for name, state := range states {
		state.addExtras(extras, key)
		state.Tokens = tokensFor(in.tokens, name)
		states[name] = state
	}
}

// readOptional reads path, treating "" and a missing file as no content.
func readOptional(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return data, err
}

// contentKey hashes the inputs of one pool's served bytes; equal keys mean equal bytes.
func contentKey(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		// Length-prefix each part so ("ab","c") and ("a","bc") differ.
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// tokensFor attaches pool's tokens from a tokens file, if it lists the pool.
func tokensFor(tokens map[string]PoolTokens, pool string) *PoolTokens {
	if t, ok := tokens[pool]; ok {
		return &t
	}
	return nil
}
