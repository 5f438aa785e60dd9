using IpcBench.Daemon.Cli;

return await DaemonCommandLine.InvokeAsync(args);
