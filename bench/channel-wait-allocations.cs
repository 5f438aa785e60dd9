#:property TieredCompilation=false
// Why the channels transport's BLOCK mode does not wait through the channel's WaitToReadAsync/WaitToWriteAsync (see
// src/IpcBench.Transports/channels/README.md): `dotnet run bench/channel-wait-allocations.cs [MESSAGES] [CAPACITY] [WORK]`
// runs one writer and one reader thread over a bounded channel as the transport once did (a pending ValueTask, an
// UnsafeOnCompleted continuation releasing a SemaphoreSlim) and charges every byte each thread allocates to the call
// that allocated it.
using System.Threading.Channels;

int messages = args.Length > 0 ? int.Parse(args[0]) : 1_000_000;
int capacity = args.Length > 1 ? int.Parse(args[1]) : 1024;
int work = args.Length > 2 ? int.Parse(args[2]) : 50; // the reader's busy work per message, as a FULL payload check
var channel = Channel.CreateBounded<object>(new BoundedChannelOptions(capacity)
{
    SingleReader = true, SingleWriter = true, FullMode = BoundedChannelFullMode.Wait, AllowSynchronousContinuations = true,
});
var item = new object();
for (int i = 0; i < capacity; i++)
{
    channel.Writer.TryWrite(item);
}

while (channel.Reader.TryRead(out _))
{
}

string[] sites = ["reader: TryRead", "reader: WaitToReadAsync", "reader: UnsafeOnCompleted", "reader: SemaphoreSlim.Wait", "reader: GetResult",
    "writer: TryWrite", "writer: WaitToWriteAsync", "writer: UnsafeOnCompleted", "writer: SemaphoreSlim.Wait", "writer: GetResult"];
long[] bytes = new long[sites.Length], allocating = new long[sites.Length], calls = new long[sites.Length];
void Charge(int site, long before)
{
    long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
    bytes[site] += allocated;
    calls[site]++;
    allocating[site] += allocated > 0 ? 1 : 0;
}

bool Until(int side, ValueTask<bool> pending, SemaphoreSlim signal, Action release)
{
    if (!pending.IsCompleted)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        pending.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(release);
        Charge(side + 2, before);
        while (!pending.IsCompleted)
        {
            before = GC.GetAllocatedBytesForCurrentThread();
            signal.Wait(TimeSpan.FromMilliseconds(20));
            Charge(side + 3, before);
        }
    }

    long got = GC.GetAllocatedBytesForCurrentThread();
    bool result = pending.GetAwaiter().GetResult();
    Charge(side + 4, got);
    return result;
}

var readSignal = new SemaphoreSlim(0);
var writeSignal = new SemaphoreSlim(0);
Action readRelease = () => readSignal.Release(), writeRelease = () => writeSignal.Release();
long poolItems = ThreadPool.CompletedWorkItemCount;
var reader = new Thread(() =>
{
    long sum = 0;
    for (int n = 0; n < messages; n++)
    {
        while (true)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            bool read = channel.Reader.TryRead(out _);
            Charge(0, before);
            if (read)
            {
                break;
            }

            before = GC.GetAllocatedBytesForCurrentThread();
            var pending = channel.Reader.WaitToReadAsync(CancellationToken.None);
            Charge(1, before);
            Until(0, pending, readSignal, readRelease);
        }

        for (int s = 0; s < work; s++)
        {
            sum += s;
        }
    }

    GC.KeepAlive(sum);
});
var writer = new Thread(() =>
{
    for (int n = 0; n < messages; n++)
    {
        while (true)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            bool written = channel.Writer.TryWrite(item);
            Charge(5, before);
            if (written)
            {
                break;
            }

            before = GC.GetAllocatedBytesForCurrentThread();
            var pending = channel.Writer.WaitToWriteAsync();
            Charge(6, before);
            Until(5, pending, writeSignal, writeRelease);
        }
    }
});
reader.Start();
writer.Start();
reader.Join();
writer.Join();
Console.WriteLine($"{messages} messages, capacity {capacity}, reader work {work}; thread-pool work items run meanwhile: {ThreadPool.CompletedWorkItemCount - poolItems}");
for (int i = 0; i < sites.Length; i++)
{
    Console.WriteLine($"  {sites[i],-28} calls {calls[i],9}  allocating {allocating[i],6}  bytes {bytes[i],7}  ({(allocating[i] > 0 ? bytes[i] / allocating[i] : 0)} B per allocating call)");
}
