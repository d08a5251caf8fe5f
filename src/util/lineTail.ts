/** The last `size` lines written (a ring): what a problem report carries of the log. Pure. */
export class LineTail {
  private readonly lines: string[] = [];

  constructor(readonly size: number) {}

  push(text: string): void {
    for (const line of text.split(/\r?\n/)) {
      this.lines.push(line);
      if (this.lines.length > this.size) this.lines.shift();
    }
  }

  last(): readonly string[] {
    return [...this.lines];
  }
}
