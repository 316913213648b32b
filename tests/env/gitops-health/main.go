// Command gitops-health evaluates redoline's GitOps health checks the way Argo CD and Flux do, so
// that tests/tests/it/gitops_health.rs can run them against fixture objects:
//
//   - the Argo CD Lua health script, in gopher-lua (the interpreter Argo CD embeds) with the same
//     libraries Argo CD opens for health scripts (package, base, table; no string, no io), the
//     object bound to the global `obj`, and the returned table read as {status, message};
//   - the Flux healthCheckExprs for OracleCapture, with cel-go and the environment options of
//     fluxcd/pkg/runtime/cel (parse only, no type check; optional types, ext strings/sets/encoders),
//     evaluated in Flux's order: observedGeneration check, then inProgress, failed, current, else
//     InProgress;
//   - kstatus (sigs.k8s.io/cli-utils pkg/kstatus/status.Compute), what Flux without
//     healthCheckExprs, kpt and `kubectl apply --prune`-style tools use for custom resources.
//
// Usage: gitops-health LUA_SCRIPT FLUX_KUSTOMIZATION_YAML OBJECT.json...
// Prints one JSON line per object:
// {"file","argocd":{"status","message"},"flux":"Current|InProgress|Failed","kstatus":{"status","message"}}
// with "argocdError"/"fluxError" instead when a check fails to run (a Flux expression error makes
// Flux keep polling, i.e. the resource stays in progress until the health timeout).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"context"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

type argoResult struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

type kstatusResult struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

type result struct {
	File         string         `json:"file"`
	Argo         *argoResult    `json:"argocd,omitempty"`
	ArgoError    string         `json:"argocdError,omitempty"`
	Flux         string         `json:"flux,omitempty"`
	FluxError    string         `json:"fluxError,omitempty"`
	Kstatus      *kstatusResult `json:"kstatus,omitempty"`
	KstatusError string         `json:"kstatusError,omitempty"`
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: gitops-health LUA_SCRIPT FLUX_KUSTOMIZATION_YAML OBJECT.json...")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	check(err)
	exprs, err := fluxExpressions(os.Args[2])
	check(err)
	out := json.NewEncoder(os.Stdout)
	for _, file := range os.Args[3:] {
		data, err := os.ReadFile(file)
		check(err)
		var raw map[string]any
		check(json.Unmarshal(data, &raw))
		obj, _ := integers(raw).(map[string]any)
		r := result{File: file}
		if a, err := argoHealth(string(script), obj); err != nil {
			r.ArgoError = err.Error()
		} else {
			r.Argo = a
		}
		if f, err := exprs.evaluate(obj); err != nil {
			r.FluxError = err.Error()
		} else {
			r.Flux = f
		}
		if k, err := status.Compute(&unstructured.Unstructured{Object: obj}); err != nil {
			r.KstatusError = err.Error()
		} else {
			r.Kstatus = &kstatusResult{Status: k.Status.String(), Message: k.Message}
		}
		check(out.Encode(r))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gitops-health:", err)
		os.Exit(1)
	}
}

// --- Argo CD ---------------------------------------------------------------------------------

var argoStatuses = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

func argoHealth(script string, obj map[string]any) (*argoResult, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	// The libraries Argo CD opens for health scripts (util/lua/lua.go, runLua); its "safe os"
	// (time functions only) is left out: a script that needs it fails here instead of passing.
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", decode(l, obj))
	if err := l.DoString(script); err != nil {
		return nil, err
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("the script returned %s, not a table", l.Get(-1).Type())
	}
	status, _ := ret.RawGetString("status").(lua.LString)
	message, _ := ret.RawGetString("message").(lua.LString)
	if !argoStatuses[string(status)] {
		return nil, fmt.Errorf("invalid health status %q (Argo CD would show Unknown)", status)
	}
	return &argoResult{Status: string(status), Message: string(message)}, nil
}

// decode converts JSON data to Lua values as Argo CD's decodeValue does.
func decode(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, item := range v {
			t.RawSetString(k, decode(l, item))
		}
		return t
	case []any:
		t := l.NewTable()
		for i, item := range v {
			t.RawSetInt(i+1, decode(l, item))
		}
		return t
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case bool:
		return lua.LBool(v)
	default:
		return lua.LNil
	}
}

// integers turns whole JSON numbers into int64, as the API machinery's unstructured objects (what
// Flux evaluates) hold them.
func integers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			v[k] = integers(item)
		}
		return v
	case []any:
		for i, item := range v {
			v[i] = integers(item)
		}
		return v
	case float64:
		if v == float64(int64(v)) {
			return int64(v)
		}
		return v
	default:
		return v
	}
}

// --- Flux ------------------------------------------------------------------------------------

type fluxExprs struct {
	current, inProgress, failed cel.Program
}

func fluxExpressions(path string) (*fluxExprs, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var k struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			HealthCheckExprs []struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Current    string `json:"current"`
				InProgress string `json:"inProgress"`
				Failed     string `json:"failed"`
			} `json:"healthCheckExprs"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if k.Kind != "Kustomization" || k.APIVersion != "kustomize.toolkit.fluxcd.io/v1" {
		return nil, fmt.Errorf("%s: not a kustomize.toolkit.fluxcd.io/v1 Kustomization", path)
	}
	for _, e := range k.Spec.HealthCheckExprs {
		if e.APIVersion != "redoline.io/v1alpha1" || e.Kind != "OracleCapture" {
			continue
		}
		if e.Current == "" {
			return nil, fmt.Errorf("%s: current is required", path)
		}
		var f fluxExprs
		for _, p := range []struct {
			expr string
			prog *cel.Program
		}{{e.Current, &f.current}, {e.InProgress, &f.inProgress}, {e.Failed, &f.failed}} {
			if p.expr == "" {
				continue
			}
			if *p.prog, err = program(p.expr); err != nil {
				return nil, err
			}
		}
		return &f, nil
	}
	return nil, fmt.Errorf("%s: no healthCheckExprs entry for redoline.io/v1alpha1 OracleCapture", path)
}

// program builds a CEL program with the environment of fluxcd/pkg/runtime/cel NewExpression.
func program(expr string) (cel.Program, error) {
	env, err := cel.NewEnv(
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Encoders(),
	)
	if err != nil {
		return nil, err
	}
	ast, issues := env.Parse(expr)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("parsing %q: %w", expr, issues.Err())
	}
	return env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
}

func (f *fluxExprs) evaluate(obj map[string]any) (string, error) {
	// Flux's StatusEvaluator: a status.observedGeneration that differs from metadata.generation
	// is InProgress before any expression runs.
	if st, ok := obj["status"].(map[string]any); ok {
		if og, ok := st["observedGeneration"].(int64); ok {
			if md, ok := obj["metadata"].(map[string]any); ok {
				if g, ok := md["generation"].(int64); ok && g != og {
					return "InProgress", nil
				}
			}
		}
	}
	for _, e := range []struct {
		prog   cel.Program
		status string
	}{{f.inProgress, "InProgress"}, {f.failed, "Failed"}, {f.current, "Current"}} {
		if e.prog == nil {
			continue
		}
		val, _, err := e.prog.Eval(obj)
		if err != nil {
			return "", fmt.Errorf("%s expression: %w", e.status, err)
		}
		b, ok := val.(types.Bool)
		if !ok {
			return "", fmt.Errorf("%s expression is not a boolean", e.status)
		}
		if b {
			return e.status, nil
		}
	}
	return "InProgress", nil
}
