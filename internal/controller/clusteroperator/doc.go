// Package clusteroperator keeps ClusterOperator `machine-config` (config.openshift.io/v1) true
// to the system on OpenShift: it creates the object when absent and writes the status
// internal/operatorstatus computes from the pools, MachineConfiguration `cluster`, the
// KubeletConfigs and ContainerRuntimeConfigs. The manager starts it only where the cluster
// serves the ClusterOperator kind (Served), so on plain Kubernetes nothing watches or writes it.
package clusteroperator
