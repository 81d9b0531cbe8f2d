import type { Pool } from 'pg';

/** The bare job's one activity: the same chat request our provider sends, and one INSERT. */
export function baselineActivities(pool: Pool, simulatorUrl: string) {
  return {
    async callProviderAndStore(id: string, text: string): Promise<string> {
      const response = await fetch(`${simulatorUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': id },
        body: JSON.stringify({
          model: 'sim-steady',
          messages: [
            { role: 'system', content: 'Summarize the text. Answer as JSON: {"summary": string}.' },
            { role: 'user', content: text },
          ],
          response_format: { type: 'json_object' },
        }),
      });
      if (!response.ok) throw new Error(`the simulator answered ${response.status}`);
      const answer = (await response.json()) as {
        choices: Array<{ message: { content: string } }>;
      };
      const summary = answer.choices[0]?.message.content ?? '';
      await pool.query('INSERT INTO baseline_results (id, summary) VALUES ($1, $2)', [id, summary]);
      return summary;
    },
  };
}

export type BaselineActivities = ReturnType<typeof baselineActivities>;
