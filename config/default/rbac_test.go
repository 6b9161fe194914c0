package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/discovery"

	"github.com/mco-dev/mco/internal/testenv"
)

func (c apiCall) String() string {
	res := c.resource
	if c.group != "" {
		res += "." + c.group
	}
	if c.subresource != "" {
		res += "/" + c.subresource
	}
	if c.name != "" {
		res += " " + c.name
	}
	where := "cluster-wide"
	if c.namespace != "" {
		where = "in " + c.namespace
	}
	return fmt.Sprintf("%s: %s %s %s", c.component, c.verb, res, where)
}

func user(component string) string {
	return "system:serviceaccount:" + mcoNS + ":" + serviceAccounts[component]
}

// canI asks the API server, with the real kubectl, whether component's ServiceAccount may make call.
func canI(t *testing.T, e *testenv.Env, c apiCall) bool {
	t.Helper()
	target := c.resource
	if c.group != "" {
		target += "." + c.group
	}
	if c.name != "" {
		target += "/" + c.name
	}
	args := []string{"auth", "can-i", c.verb, target, "--as=" + user(c.component)}
	if c.subresource != "" {
		args = append(args, "--subresource="+c.subresource)
	}
	if c.namespace != "" {
		args = append(args, "-n", c.namespace)
	} else {
		args = append(args, "--all-namespaces")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e.Kubectl(ctx, args...)
	switch strings.TrimSpace(out) {
	case "yes":
		return true
	case "no":
		return false
	}
	t.Fatalf("kubectl %s: %q, %v", strings.Join(args, " "), out, err)
	return false
}

// Every call of the table is allowed for its component's ServiceAccount by the RBAC that
// config/default installed (the test API server enforces RBAC).
func TestRBACAllowsEveryCall(t *testing.T) {
	e := requireEnv(t)
	checkResourcesExist(t, e, apiCalls)
	forEachParallel(t, apiCalls, func(t *testing.T, c apiCall) {
		if !canI(t, e, c) {
			t.Errorf("RBAC does not allow %s (%s): add a rule to config/default/%s-rbac.yaml", c, c.by, c.component)
		}
	})
}

// Each component is refused what it must never do.
func TestRBACForbids(t *testing.T) {
	e := requireEnv(t)
	forEachParallel(t, forbidden, func(t *testing.T, c apiCall) {
		if canI(t, e, c) {
			t.Errorf("RBAC allows %s", c)
		}
	})
	// The same negative checks prove something only if can-i can say yes for these users.
	if !canI(t, e, apiCalls[0]) {
		t.Fatal("can-i says no to everything")
	}
}

func forEachParallel(t *testing.T, calls []apiCall, check func(*testing.T, apiCall)) {
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			check(t, c)
		}()
	}
	wg.Wait()
}

// checkResourcesExist catches typos in the table: can-i answers for resources that do not exist.
func checkResourcesExist(t *testing.T, e *testenv.Env, calls []apiCall) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, l := range lists {
		group, _, _ := strings.Cut(l.GroupVersion, "/")
		if !strings.Contains(l.GroupVersion, "/") {
			group = ""
		}
		for _, r := range l.APIResources {
			known[group+" "+r.Name] = true
		}
	}
	for _, c := range calls {
		res := c.resource
		if c.subresource != "" {
			res += "/" + c.subresource
		}
		if !known[c.group+" "+res] && c.subresource != "finalizers" { // finalizers exists only for admission
			t.Errorf("table row %s: the API server has no resource %q in group %q", c, res, c.group)
		}
	}
}

// grant is one (verb, resource, namespace, name) a shipped Role or ClusterRole gives a component.
type grant struct {
	apiCall
	role string
}

// grants expands the shipped RBAC into single permissions per component.
func grants(t *testing.T) []grant {
	t.Helper()
	components := map[string]string{}
	for comp, sa := range serviceAccounts {
		components[sa] = comp
	}
	type roleKey struct{ kind, namespace, name string }
	rules := map[roleKey][]rbacv1.PolicyRule{}
	for _, o := range objects(t) {
		switch o.GetKind() {
		case "ClusterRole":
			rules[roleKey{"ClusterRole", "", o.GetName()}] = typed[rbacv1.ClusterRole](t, o).Rules
		case "Role":
			rules[roleKey{"Role", o.GetNamespace(), o.GetName()}] = typed[rbacv1.Role](t, o).Rules
		}
	}
	var out []grant
	bind := func(kind, namespace, name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject) {
		roleNS := namespace
		if ref.Kind == "ClusterRole" {
			roleNS = ""
		}
		rs, ok := rules[roleKey{ref.Kind, roleNS, ref.Name}]
		if !ok {
			t.Errorf("%s %s binds %s %s, which config/default does not ship", kind, name, ref.Kind, ref.Name)
		}
		for _, s := range subjects {
			comp, ok := components[s.Name]
			if s.Kind != "ServiceAccount" || s.Namespace != mcoNS || !ok {
				t.Errorf("%s %s binds %s %s/%s, not one of mco's ServiceAccounts", kind, name, s.Kind, s.Namespace, s.Name)
				continue
			}
			for _, r := range rs {
				if len(r.NonResourceURLs) > 0 {
					t.Errorf("%s %s grants non-resource URLs %v", ref.Kind, ref.Name, r.NonResourceURLs)
				}
				names := r.ResourceNames
				if len(names) == 0 {
					names = []string{""}
				}
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						resource, sub, _ := strings.Cut(res, "/")
						for _, v := range r.Verbs {
							for _, n := range names {
								out = append(out, grant{apiCall{comp, v, g, resource, sub, namespace, n, ""}, ref.Kind + " " + ref.Name})
							}
						}
					}
				}
			}
		}
	}
	for _, o := range objects(t) {
		switch o.GetKind() {
		case "ClusterRoleBinding":
			b := typed[rbacv1.ClusterRoleBinding](t, o)
			bind("ClusterRoleBinding", "", b.Name, b.RoleRef, b.Subjects)
		case "RoleBinding":
			b := typed[rbacv1.RoleBinding](t, o)
			bind("RoleBinding", b.Namespace, b.Name, b.RoleRef, b.Subjects)
		}
	}
	return out
}

// Every permission the shipped RBAC grants is a call of the table: nothing left over, no
// wildcards. A Role's grant must match a row in its namespace; a ClusterRole's a cluster-wide
// row; a grant without resourceNames a row without a name.
func TestRBACGrantsOnlyListedCalls(t *testing.T) {
	all := grants(t)
	if len(all) == 0 {
		t.Fatal("no RBAC grants found")
	}
	for _, g := range all {
		for _, f := range []string{g.verb, g.group, g.resource, g.subresource, g.name} {
			if strings.Contains(f, "*") {
				t.Errorf("%s grants a wildcard: %s", g.role, g.apiCall)
			}
		}
		listed := slices.ContainsFunc(apiCalls, func(c apiCall) bool {
			c.by = ""
			return c == g.apiCall
		})
		if !listed {
			t.Errorf("%s grants %s, which no row of rbac_calls_test.go needs: remove the rule or add the call", g.role, g.apiCall)
		}
	}
	// And every component has a ServiceAccount of its own.
	for comp, sa := range serviceAccounts {
		find(t, "ServiceAccount", mcoNS, sa)
		if !slices.ContainsFunc(all, func(g grant) bool { return g.component == comp }) {
			t.Errorf("%s (%s) is granted nothing", comp, sa)
		}
	}
}

// Every rule in the RBAC files says why it is there (a comment right above it).
func TestEveryRuleHasAComment(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(dir(), "*-rbac.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no RBAC files: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yamlv3.NewDecoder(strings.NewReader(string(data)))
		for {
			var doc yamlv3.Node
			if err := dec.Decode(&doc); err != nil {
				break
			}
			root := doc.Content[0]
			for i := 0; i+1 < len(root.Content); i += 2 {
				if root.Content[i].Value != "rules" {
					continue
				}
				for j, rule := range root.Content[i+1].Content {
					if strings.TrimSpace(rule.HeadComment) == "" {
						t.Errorf("%s: rule %d (line %d) has no comment saying why", filepath.Base(f), j, rule.Line)
					}
				}
			}
		}
	}
}
