using IpcBench.Daemon.Core;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using k8s;
using k8s.Models;
using YamlDotNet.RepresentationModel;
using static IpcBench.Daemon.Tests.Infrastructure.DeployFiles;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// deploy/k8s without a cluster: every manifest read into the Kubernetes API's models in strict mode (an unknown or
/// misplaced field fails, as the API server would refuse it), the kustomizations' files, and the facts the daemon needs
/// from them: the host's IPC namespace, gRPC health probes on its control port, Guaranteed QoS on whole CPUs, no
/// capabilities but in the realtime overlay, its token from a Secret, a headless Service naming its ports.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class DeployFilesKubernetesTests
{
    private static readonly string[] RealtimeCapabilities = ["IPC_LOCK", "SYS_NICE"];

    private static string K8s(params string[] parts) => Repo(["deploy", "k8s", .. parts]);

    private static List<object> Load(params string[] path) => KubernetesYaml.LoadAllFromString(File.ReadAllText(K8s(path)), typeMap: null, strict: true);

    private static V1DaemonSet DaemonSet() => Load("daemonset.yaml").OfType<V1DaemonSet>().Single();

    private static V1Container Daemon() => DaemonSet().Spec.Template.Spec.Containers.Single();

    private static Dictionary<string, V1EnvVar> Environment() => Daemon().Env.ToDictionary(e => e.Name);

    [Fact]
    public void Kustomizations_NameOnlyExistingFiles_AndReachEveryManifest()
    {
        var reached = new HashSet<string>(StringComparer.Ordinal);
        foreach (var directory in new[] { K8s(), K8s("overlays", "realtime") })
        {
            var kustomization = LoadYaml(Path.GetRelativePath(RepoLayout.Root, Path.Combine(directory, "kustomization.yaml")));
            Assert.Equal("kustomize.config.k8s.io/v1beta1", kustomization["apiVersion"].ToString());
            Assert.Equal("Kustomization", kustomization["kind"].ToString());
            reached.Add(Path.GetFullPath(Path.Combine(directory, "kustomization.yaml")));
            var patches = (kustomization.Get("patches") as YamlSequenceNode)?.Children.Cast<YamlMappingNode>().Select(p => p["path"].ToString()) ?? [];
            foreach (var entry in kustomization.Get("resources").Scalars().Concat(patches))
            {
                var path = Path.GetFullPath(Path.Combine(directory, entry));
                Assert.True(File.Exists(path) || File.Exists(Path.Combine(path, "kustomization.yaml")),
                    $"{Path.GetRelativePath(RepoLayout.Root, directory)}/kustomization.yaml names {entry}, which is neither a file nor a kustomization");
                reached.Add(path);
            }
        }

        // A manifest no kustomization names is never applied; the PodMonitor alone is applied on its own (its header says why).
        var orphans = Directory.EnumerateFiles(K8s(), "*.yaml", SearchOption.AllDirectories)
            .Where(f => !reached.Contains(f) && Path.GetFileName(f) != "podmonitor.yaml")
            .Select(f => Path.GetRelativePath(RepoLayout.Root, f))
            .ToList();
        Assert.True(orphans.Count == 0, $"manifests no kustomization names: {string.Join(", ", orphans)}");
        Assert.Equal(["../.."], LoadYaml("deploy", "k8s", "overlays", "realtime", "kustomization.yaml").Get("resources").Scalars());
    }

    [Fact]
    public void Manifests_LoadStrictly_IntoTheApiModels()
    {
        Assert.IsType<V1Namespace>(Assert.Single(Load("namespace.yaml")));
        Assert.IsType<V1DaemonSet>(Assert.Single(Load("daemonset.yaml")));
        Assert.IsType<V1Service>(Assert.Single(Load("service.yaml")));
        Assert.IsType<V1DaemonSet>(Assert.Single(Load("overlays", "realtime", "realtime.yaml")));

        // The loader is strict, or none of the above would catch a misspelt field: the same file with one is refused.
        var misspelt = File.ReadAllText(K8s("daemonset.yaml")).Replace("hostIPC: true", "hostIpc: true", StringComparison.Ordinal);
        Assert.NotEqual(File.ReadAllText(K8s("daemonset.yaml")), misspelt);
        Assert.ThrowsAny<Exception>(() => KubernetesYaml.LoadAllFromString(misspelt, typeMap: null, strict: true));
    }

    /// <summary>
    /// The node's /dev/shm and IPC namespace (a container's own is 64 MiB), which the baseline Pod Security Standard
    /// forbids: the namespace the kustomization puts the daemons in must admit privileged pods.
    /// </summary>
    [Fact]
    public void DaemonSet_SharesTheHostsIpc_InANamespaceThatAdmitsIt()
    {
        Assert.True(DaemonSet().Spec.Template.Spec.HostIPC, "hostIPC: true");
        var ns = Assert.IsType<V1Namespace>(Assert.Single(Load("namespace.yaml")));
        Assert.Equal(LoadYaml("deploy", "k8s", "kustomization.yaml")["namespace"].ToString(), ns.Metadata.Name);
        Assert.Equal("privileged", ns.Metadata.Labels["pod-security.kubernetes.io/enforce"]);
        // What hostIPC provides is what the daemon uses, and no volume hides it.
        Assert.Equal("/dev/shm", Environment().GetValueOrDefault("IpcBench__SharedMemoryDirectory")?.Value ?? new DaemonOptions().SharedMemoryDirectory);
        Assert.DoesNotContain(Daemon().VolumeMounts, m => m.MountPath.TrimEnd('/') == "/dev/shm");
    }

    [Fact]
    public void DaemonSet_ProbesGrpcHealth_OnTheControlPort_ForServicesTheDaemonReports()
    {
        var daemon = Daemon();
        var environment = Environment();
        int control = PortOf(environment["IpcBench__ControlAddress"].Value);
        Assert.Equal(control, daemon.Ports.Single(p => p.Name == "grpc").ContainerPort);

        // The names DaemonHost maps to the readiness check: "" (the server) and the control service.
        string?[] reported = [null, "", BenchControl.Descriptor.FullName];
        var probes = new Dictionary<string, V1Probe?> { ["liveness"] = daemon.LivenessProbe, ["readiness"] = daemon.ReadinessProbe, ["startup"] = daemon.StartupProbe };
        foreach (var (kind, probe) in probes)
        {
            Assert.True(probe?.Grpc is not null, $"the {kind} probe is not a gRPC probe");
            Assert.True(probe.HttpGet is null && probe.TcpSocket is null && probe.Exec is null, $"the {kind} probe has a second handler");
            Assert.Equal(control, probe.Grpc.Port);
            Assert.Contains(probe.Grpc.Service, reported);
            // The kubelet's gRPC probe dials h2c (mode: TLS is alpha), so no TLS option may be set on the daemon.
            Assert.Null(probe.Grpc.Mode);
        }

        Assert.DoesNotContain(environment.Keys, k => k.StartsWith("IpcBench__Tls", StringComparison.Ordinal));
    }

    /// <summary>Requests equal to limits for every resource of every container, whole CPUs: what the static CPU manager wants.</summary>
    [Fact]
    public void DaemonSet_IsGuaranteedQoS_WithWholeCpus()
    {
        var spec = DaemonSet().Spec.Template.Spec;
        Assert.Null(spec.InitContainers);
        foreach (var container in spec.Containers)
        {
            var requests = container.Resources?.Requests ?? new Dictionary<string, ResourceQuantity>();
            var limits = container.Resources?.Limits ?? new Dictionary<string, ResourceQuantity>();
            Assert.Equal(["cpu", "memory"], limits.Keys.Order());
            Assert.Equal(limits.Keys.Order(), requests.Keys.Order());
            foreach (var (resource, limit) in limits)
            {
                Assert.True(requests[resource].ToDecimal() == limit.ToDecimal(), $"{container.Name}: {resource} request {requests[resource]} != limit {limit}");
            }

            var cpu = limits["cpu"].ToDecimal();
            Assert.True(cpu >= 1 && cpu == decimal.Truncate(cpu), $"{container.Name}: cpu {limits["cpu"]} is not a whole number of CPUs");
        }
    }

    /// <summary>
    /// Unprivileged as the image is: every capability dropped and none added (the realtime overlay's job), no way to
    /// gain any, a read-only root file system with volumes where the daemon writes.
    /// </summary>
    [Fact]
    public void DaemonSet_AddsNoCapability_AndWritesOnlyToItsVolumes()
    {
        var daemonSet = DaemonSet();
        var spec = daemonSet.Spec.Template.Spec;
        Assert.True(spec.HostNetwork is null or false && spec.HostPID is null or false, "the host's network or pids");
        var security = Daemon().SecurityContext;
        Assert.Null(security.Capabilities.Add);
        Assert.Equal(["ALL"], security.Capabilities.Drop);
        Assert.True(security.Privileged is null or false);
        Assert.False(security.AllowPrivilegeEscalation);
        Assert.True(security.RunAsNonRoot);
        Assert.True(security.ReadOnlyRootFilesystem);

        var environment = Environment();
        var mounts = Daemon().VolumeMounts.Select(m => m.MountPath.TrimEnd('/') + "/").ToList();
        var volumes = spec.Volumes.Select(v => v.Name).ToHashSet();
        Assert.All(Daemon().VolumeMounts, m => Assert.Contains(m.Name, volumes));
        foreach (var written in new[] { environment["IpcBench__RuntimeDirectory"].Value + "/", Path.GetDirectoryName(environment["IpcBench__DatabasePath"].Value) + "/" })
        {
            Assert.True(mounts.Any(m => written.StartsWith(m, StringComparison.Ordinal)), $"{written} is on the read-only root file system");
        }
    }

    /// <summary>As docker-compose.yml: listening on the pod network takes a token, which comes from a Secret and is never written here.</summary>
    [Fact]
    public void DaemonSet_TakesTheControlToken_FromASecret()
    {
        var environment = Environment();
        DeployFiles.AssertDaemonOptions(environment.Keys.Where(k => k != ControlPlaneSecurity.TokenVariable), "daemonset.yaml");
        var token = environment[ControlPlaneSecurity.TokenVariable];
        Assert.Null(token.Value);
        Assert.NotNull(token.ValueFrom.SecretKeyRef);
        Assert.False(token.ValueFrom.SecretKeyRef.Optional ?? false, "an optional Secret would start the daemon without a token, which it refuses");
        Assert.False(string.IsNullOrEmpty(token.ValueFrom.SecretKeyRef.Name) || string.IsNullOrEmpty(token.ValueFrom.SecretKeyRef.Key));
        Assert.DoesNotContain(environment.Keys, k => k == "IpcBench__ControlTokenFile");

        var options = new DaemonOptions { ControlAddress = environment["IpcBench__ControlAddress"].Value };
        Assert.False(ControlPlaneSecurity.IsLocalOnly(options.ControlAddress), "the daemons are meant to be reachable in the cluster");
        var result = new ControlPlaneOptionsValidator(() => "from-the-secret-at-run-time").Validate(null, options);
        Assert.True(result.Succeeded, result.FailureMessage);
    }

    /// <summary>The kustomization's image is the one docker-compose.yml builds, and the DaemonSet names it as the image transformer matches.</summary>
    [Fact]
    public void DaemonSet_RunsTheImageComposeBuilds_OnTheMetricsAndControlPortsItConfigures()
    {
        var image = (YamlMappingNode)((YamlSequenceNode)LoadYaml("deploy", "k8s", "kustomization.yaml")["images"]).Children.Single();
        Assert.Equal(image["name"].ToString(), Daemon().Image);
        var compose = (YamlMappingNode)((YamlMappingNode)LoadYaml("docker-compose.yml")["services"])["daemon"];
        Assert.Equal(compose["image"].ToString(), $"{image["newName"]}:{image["newTag"]}");

        var environment = Environment();
        Assert.Equal(PortOf(environment["IpcBench__MetricsAddress"].Value), Daemon().Ports.Single(p => p.Name == "metrics").ContainerPort);
        Assert.Equal(["grpc", "metrics"], Daemon().Ports.Select(p => p.Name).Order());
    }

    /// <summary>
    /// The overlay is a strategic merge patch: it must name the base's DaemonSet and container (another name would add
    /// a second, image-less container), add CAP_SYS_NICE and CAP_IPC_LOCK and nothing else, keep the base's drop, and
    /// run as UID 0, the only user Kubernetes gives added capabilities to effectively.
    /// </summary>
    [Fact]
    public void RealtimeOverlay_AddsExactlySysNiceAndIpcLock_ToTheBasesContainer()
    {
        var baseSet = DaemonSet();
        var patch = Assert.IsType<V1DaemonSet>(Assert.Single(Load("overlays", "realtime", "realtime.yaml")));
        Assert.Equal(baseSet.Metadata.Name, patch.Metadata.Name);
        var patchedSpec = patch.Spec.Template.Spec;
        Assert.True(patchedSpec.HostNetwork is null && patchedSpec.HostPID is null && patchedSpec.Volumes is null, "the overlay changes more than capabilities");
        var container = Assert.Single(patchedSpec.Containers);
        var target = baseSet.Spec.Template.Spec.Containers.SingleOrDefault(c => c.Name == container.Name);
        Assert.True(target is not null, $"the patch's container {container.Name} is not the base's: it would be added, not patched");

        var security = container.SecurityContext;
        var merged = (target.SecurityContext.Capabilities.Add ?? []).Union(security.Capabilities.Add ?? []).Order();
        Assert.Equal(RealtimeCapabilities, merged);
        Assert.Null(security.Capabilities.Drop);
        Assert.True(security.Privileged is null or false && security.AllowPrivilegeEscalation is null or false);
        Assert.Equal(0, security.RunAsUser);
        Assert.False(security.RunAsNonRoot, "runAsNonRoot: true (the base's) would refuse UID 0");
    }

    [Fact]
    public void Service_IsHeadless_SelectsTheDaemons_AndNamesTheirPorts()
    {
        var service = Assert.IsType<V1Service>(Assert.Single(Load("service.yaml")));
        Assert.Equal("None", service.Spec.ClusterIP);
        var labels = DaemonSet().Spec.Template.Metadata.Labels;
        Assert.All(service.Spec.Selector, s => Assert.Equal(s.Value, labels.TryGetValue(s.Key, out var label) ? label : null));
        Assert.Equal(DaemonSet().Spec.Selector.MatchLabels.OrderBy(l => l.Key), service.Spec.Selector.OrderBy(l => l.Key));

        var containerPorts = Daemon().Ports.ToDictionary(p => p.Name, p => p.ContainerPort);
        Assert.Equal(containerPorts.Keys.Order(), service.Spec.Ports.Select(p => p.Name).Order());
        foreach (var port in service.Spec.Ports)
        {
            Assert.Equal(port.Name, port.TargetPort?.Value);
            Assert.Equal(containerPorts[port.Name], port.Port);
        }
    }
}
