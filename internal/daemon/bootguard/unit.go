package bootguard

// Unit is mco-boot-guard.service. It is wanted by multi-user.target and ordered against
// nothing of the kubelet's, so it runs whatever the kubelet does; Type=exec so the boot does
// not wait for its check. It runs only while a guard is armed; its timeout counts from the
// boot (the machine's PID 1 starting), not from its own start.
const Unit = `[Unit]
Description=mco boot guard: revert an update whose reboot leaves the kubelet unhealthy or the Node not Ready
ConditionPathExists=` + RecordPath + `
Wants=network-online.target
After=network-online.target

[Service]
Type=exec
ExecStart=` + BinaryPath + ` daemon boot-guard

[Install]
WantedBy=multi-user.target
`
