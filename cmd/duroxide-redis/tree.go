package main

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// treeNode is the --json form of an instance tree.
type treeNode struct {
	Instance string      `json:"instance"`
	Name     string      `json:"name"`
	Status   string      `json:"status"`
	Children []*treeNode `json:"children"`

	parent string
}

func runTree(c *cli, args []string) error {
	return inspect(c, c.flags("tree"), args, (*session).tree, c.printTree)
}

func (c *cli) printTree(root *treeNode) error {
	fmt.Fprintf(c.stdout, "%s  %s  %s\n", root.Instance, root.Name, root.Status)
	c.printBranches(root.Children, "")
	return nil
}

// tree reads the instance's descendants from the provider's child indexes
// and links each to its parent by its record.
func (s *session) tree(instance string) (*treeNode, error) {
	const op = "tree"
	info, err := s.instanceInfo(op, instance)
	if err != nil {
		return nil, err
	}
	t, err := s.admin.GetInstanceTree(s.ctx, instance)
	if err != nil {
		return nil, err
	}
	root := newTreeNode(info)
	nodes := map[string]*treeNode{instance: root}
	// AllIDs lists parents before their children, so each parent is linked
	// before its children look it up.
	for _, id := range t.AllIDs {
		if id == instance {
			continue
		}
		info, err := s.instanceInfo(op, id)
		if err != nil {
			return nil, err
		}
		n := newTreeNode(info)
		nodes[id] = n
		if parent, ok := nodes[n.parent]; ok {
			parent.Children = append(parent.Children, n)
		}
	}
	return root, nil
}

func newTreeNode(i duroxide.InstanceInfo) *treeNode {
	return &treeNode{Instance: i.InstanceID, Name: i.OrchestrationName, Status: i.Status, Children: []*treeNode{}, parent: i.ParentInstanceID}
}

func (c *cli) printBranches(nodes []*treeNode, indent string) {
	for i, n := range nodes {
		branch, next := "├─ ", "│  "
		if i == len(nodes)-1 {
			branch, next = "└─ ", "   "
		}
		fmt.Fprintf(c.stdout, "%s%s%s  %s  %s\n", indent, branch, n.Instance, n.Name, n.Status)
		c.printBranches(n.Children, indent+next)
	}
}
