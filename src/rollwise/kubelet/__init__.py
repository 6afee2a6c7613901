"""The simulated node: what runs on a Kubernetes node, apart from the controllers that decide.

It is named after the kubelet, the node's agent, as the scenario's ``kubelet:`` block and ``up --kubelet`` are:
everything here plays the node's part, for the simulator, the explorer and ``rollwise up`` alike. The operator and
the controllers never import it (a contract in pyproject.toml); a real cluster brings its own nodes.

- The pure kubelet: ``agent`` (a pod's status at a time and when to look again), ``profiles``, ``containers``,
  ``status``, ``termination``.
- The application models a pod may run: ``quorum`` (an etcd-like cluster, with ``quorum_state``,
  ``quorum_probe``, ``quorum_observe``), and ``process`` (real store processes for the members of a set).
- The drive loops that run them against a store on a clock (virtual or wall, ``runtime/clock.py``): ``loop`` (the
  kubelet's), ``quorum_binding`` (a quorum model kept in step with its member pods), ``volumes`` (a claim's
  expansion, as the external resizer and the kubelet report it) and ``hook_agent`` (an application's drain agent
  releasing pre-delete hooks).

The pure parts read no clock and import no runtime (a contract too); only the drive loops do.
"""
