using IpcBench.Agent;

return await AgentProgram.RunAsync(args);
