namespace IpcBench.Iceoryx2.Tests;

/// <summary>The one-call-per-batch receive (release + receive) and the one-call-per-message send (send + next loan).</summary>
public class BatchTests
{
    private static PublishSubscribeOptions Options(int borrowed = 4, int loans = 2) => new()
    {
        MaxMessageSize = 64,
        MaxPublishers = 1,
        MaxSubscribers = 1,
        MaxNodes = 4,
        SubscriberBufferSize = 16,
        SubscriberMaxBorrowedSamples = borrowed,
        PublisherMaxLoanedSamples = loans,
        DeliveryMode = DeliveryMode.NoLoss,
    };

    private static void SendNumbers(Iceoryx2Publisher publisher, int from, int count)
    {
        for (int i = from; i < from + count; i++)
        {
            Assert.Equal(1, publisher.SendCopy(BitConverter.GetBytes(i)));
        }
    }

    private static int Number(in ReceivedSample sample) => BitConverter.ToInt32(sample.Payload);

    [Iceoryx2Fact]
    public void Batch_receive_is_empty_partial_bounded_by_the_borrow_limit_and_releases_what_it_held()
    {
        using var node = Iceoryx2Node.Create();
        string service = TestNames.UniqueService("batch");
        using var publisher = node.CreatePublisher(service, Options(borrowed: 4));
        using var subscriber = node.CreateSubscriber(service, Options(borrowed: 4));
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));
        var batch = new ReceivedSample[8];

        // Empty: nothing received, nothing held.
        Assert.Equal(0, subscriber.ReleaseAndTryReceiveBatch(batch, 0));
        Assert.True(batch[0].IsEmpty);

        // Partial: 3 waiting, room for 8.
        SendNumbers(publisher, 0, 3);
        Assert.Equal(3, subscriber.ReleaseAndTryReceiveBatch(batch, 0));
        Assert.Equal(new[] { 0, 1, 2 }, batch[..3].ToArray().Select(s => Number(s)));

        // Releasing the 3 and receiving again: 6 waiting, but only 4 may be borrowed at once.
        SendNumbers(publisher, 3, 6);
        Assert.Equal(4, subscriber.ReleaseAndTryReceiveBatch(batch, 3));
        Assert.Equal(new[] { 3, 4, 5, 6 }, batch[..4].ToArray().Select(s => Number(s)));

        // Were the 3 really released? Then all 4 borrow slots are this batch's, and a further receive is refused.
        var ex = Assert.Throws<Iceoryx2Exception>(() => subscriber.TryReceive(out _));
        Assert.Equal(Iceoryx2ErrorCode.ExceedsMaxBorrows, ex.ErrorCode);

        // The rest, then release everything: the held 4 go back even though nothing new is received.
        Assert.Equal(2, subscriber.ReleaseAndTryReceiveBatch(batch, 4));
        Assert.Equal(new[] { 7, 8 }, batch[..2].ToArray().Select(s => Number(s)));
        Assert.Equal(0, subscriber.ReleaseAndTryReceiveBatch(batch, 2));
        Assert.Equal(0, subscriber.ReleaseAll());

        // A batch of one (the round-trip echo receiver) and a batch that holds nothing to release.
        SendNumbers(publisher, 9, 2);
        var one = new ReceivedSample[1];
        Assert.Equal(1, subscriber.ReleaseAndTryReceiveBatch(one, 0));
        Assert.Equal(9, Number(one[0]));
        Assert.Equal(1, subscriber.ReleaseAndTryReceiveBatch(one, 1));
        Assert.Equal(10, Number(one[0]));
        Assert.Equal(0, subscriber.ReleaseAndTryReceiveBatch(one, 1));
        Assert.Equal(0, subscriber.ReleaseAll());
    }

    [Iceoryx2Fact]
    public void Batch_receive_refuses_samples_released_twice_and_bad_counts()
    {
        using var node = Iceoryx2Node.Create();
        string service = TestNames.UniqueService("batch-twice");
        using var publisher = node.CreatePublisher(service, Options());
        using var subscriber = node.CreateSubscriber(service, Options());
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));
        var batch = new ReceivedSample[4];

        SendNumbers(publisher, 0, 2);
        Assert.Equal(2, subscriber.ReleaseAndTryReceiveBatch(batch, 0));
        Assert.Equal(2, subscriber.ReleaseAll());
        SendNumbers(publisher, 2, 1);
        var ex = Assert.Throws<Iceoryx2Exception>(() => subscriber.ReleaseAndTryReceiveBatch(batch, 2));
        Assert.Equal(Iceoryx2ErrorCode.InvalidToken, ex.ErrorCode);
        Assert.Contains("2 of 2", ex.Message);

        // Nothing was received by the failed call: the message is still there.
        Assert.Equal(1, subscriber.ReleaseAndTryReceiveBatch(batch, 0));
        Assert.Equal(2, Number(batch[0]));

        Assert.Throws<ArgumentOutOfRangeException>(() => subscriber.ReleaseAndTryReceiveBatch(batch, 5));
        Assert.Throws<ArgumentOutOfRangeException>(() => subscriber.ReleaseAndTryReceiveBatch(batch, -1));
        Assert.Equal(0, subscriber.ReleaseAndTryReceiveBatch(batch, 1));
    }

    [Iceoryx2Fact]
    public void Send_and_loan_sends_and_hands_out_the_next_buffer()
    {
        using var node = Iceoryx2Node.Create();
        string service = TestNames.UniqueService("send-and-loan");
        using var publisher = node.CreatePublisher(service, Options(loans: 1));
        using var subscriber = node.CreateSubscriber(service, Options(loans: 1));
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));

        // With a single loan slot the next loan only fits because the send freed it first.
        var buffer = publisher.Loan(4, out ulong token);
        for (int i = 0; i < 5; i++)
        {
            BitConverter.TryWriteBytes(buffer, i);
            Assert.Equal(1, publisher.SendAndLoan(token, 4, out token, out buffer));
            Assert.NotEqual(0UL, token);
            Assert.Equal(4, buffer.Length);
        }

        // The prepared loan can be discarded; then a larger next loan than the service allows is not an error of the
        // send: the message goes out, no next loan, and a plain loan says why.
        publisher.Discard(token);
        buffer = publisher.Loan(4, out token);
        BitConverter.TryWriteBytes(buffer, 5);
        Assert.Equal(1, publisher.SendAndLoan(token, 65, out token, out buffer));
        Assert.Equal(0UL, token);
        Assert.True(buffer.IsEmpty);
        var ex = Assert.Throws<Iceoryx2Exception>(() => publisher.Loan(65, out _));
        Assert.Equal(Iceoryx2ErrorCode.PayloadTooLarge, ex.ErrorCode);

        // A token already sent is refused, and nothing is loaned then.
        ex = Assert.Throws<Iceoryx2Exception>(() => publisher.SendAndLoan(12345, 4, out _, out _));
        Assert.Equal(Iceoryx2ErrorCode.InvalidToken, ex.ErrorCode);
        publisher.Loan(4, out token);
        publisher.Discard(token);

        var batch = new ReceivedSample[4];
        var received = new List<int>();
        int held = 0;
        while ((held = subscriber.ReleaseAndTryReceiveBatch(batch, held)) > 0)
        {
            received.AddRange(batch[..held].ToArray().Select(s => Number(s)));
        }

        Assert.Equal(new[] { 0, 1, 2, 3, 4, 5 }, received);
    }
}
