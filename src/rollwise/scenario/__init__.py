"""The scenario file format (spec/simulate.md): objects, steps, kubelet, expectations, strategy overrides, and the
file-time check of every manifest in it. Read by the simulator, the explorer and the lab."""
