"""ccbed on CloudLab: one switch node with one NIC port per host, plus N host nodes.

The switch node runs switchd (cmd/switchd) with DPDK on its experiment ports;
each host node runs hostd (cmd/hostd) on one port, cabled to one switch port
by a dedicated link. docs/real-nodes.md says how to go from here to a run:
testbed nodes, ansible-playbook, testbed collect.

Instructions:
Pick a hardware type whose nodes have ConnectX-4/5/6 (mlx5: no NIC binding)
or Intel X710/E810 (bind to vfio-pci) ports at 10/25/100 GbE, and at least as
many experiment interfaces on the switch node as there are hosts (CloudLab's
hardware pages list each type's interfaces). Then follow docs/real-nodes.md.
"""

import geni.portal as portal
import geni.rspec.pg as pg

pc = portal.Context()
pc.defineParameter("hosts", "Host nodes (one switch port each)",
                   portal.ParameterType.INTEGER, 3,
                   longDescription="3 for the 3-to-1 experiments, up to the switch node's experiment ports.")
pc.defineParameter("switch_hwtype", "Switch node hardware type",
                   portal.ParameterType.NODETYPE, "d6515",
                   longDescription="Needs one experiment interface per host.")
pc.defineParameter("host_hwtype", "Host node hardware type",
                   portal.ParameterType.NODETYPE, "d6515")
pc.defineParameter("image", "Disk image",
                   portal.ParameterType.IMAGE,
                   "urn:publicid:IDN+emulab.net+image+emulab-ops//UBUNTU22-64-STD",
                   longDescription="Any image with apt and DPDK 22.11 packages (Debian 12, or Ubuntu 22.04/24.04 with a matching DPDK).")
pc.defineParameter("link_mbps", "Link speed (Mb/s)",
                   portal.ParameterType.BANDWIDTH, 25000,
                   longDescription="The experiment's link_gbps; 10000, 25000 or 100000.")
params = pc.bindParameters()
if params.hosts < 1 or params.hosts > 8:
    pc.reportError(portal.ParameterError("between 1 and 8 hosts", ["hosts"]))
pc.verifyParameters()

request = pc.makeRequestRSpec()

switch = request.RawPC("switch")
switch.hardware_type = params.switch_hwtype
switch.disk_image = params.image

for i in range(params.hosts):
    host = request.RawPC("h%d" % i)
    host.hardware_type = params.host_hwtype
    host.disk_image = params.image
    # One dedicated link per host: switch port i <-> host i (testbed nodes
    # wires switch port i to host i). The addresses are for the kernel only;
    # DPDK takes the ports over and ccbed addresses hosts as 10.0.0.1 + i.
    link = request.Link("link%d" % i)
    link.bandwidth = params.link_mbps * 1000  # kb/s
    link.best_effort = False
    link.link_multiplexing = False
    link.setNoInterSwitchLinks()
    sif = switch.addInterface("sw%d" % i)
    sif.addAddress(pg.IPv4Address("10.10.%d.1" % i, "255.255.255.0"))
    hif = host.addInterface("eth%d" % i)
    hif.addAddress(pg.IPv4Address("10.10.%d.2" % i, "255.255.255.0"))
    link.addInterface(sif)
    link.addInterface(hif)

pc.printRequestRSpec(request)
