/** Which of a typo lookup's matches are wanted: the `count` best that are `usable` (see TypoIndex.fuzzyMatches). */
export interface BestMatches {
  count: number;
  usable: (termId: number) => boolean;
}

/** The `count` best (distance, similarity) pairs offered: fewest edits, then most similar. */
export class TopMatches {
  private readonly distances: number[] = [];
  private readonly similarities: number[] = [];

  constructor(private readonly count: number) {}

  get full(): boolean {
    return this.distances.length === this.count;
  }

  offer(distance: number, similarity: number): void {
    if (this.full && !this.beats(distance, similarity)) return;
    let at = this.full ? this.count - 1 : this.distances.length;
    // Kept best first: move worse ones down one place (the last falls off when full).
    while (at > 0 && better(distance, similarity, this.distances[at - 1]!, this.similarities[at - 1]!)) {
      this.distances[at] = this.distances[at - 1]!;
      this.similarities[at] = this.similarities[at - 1]!;
      at--;
    }
    this.distances[at] = distance;
    this.similarities[at] = similarity;
  }

  /** Whether the worst kept is strictly better than (distance, similarity): that pair would not be kept. */
  beats(distance: number, similarity: number): boolean {
    const last = this.distances.length - 1;
    return better(this.distances[last]!, this.similarities[last]!, distance, similarity);
  }
}

/** Strictly better: fewer edits, or as many and more similar. */
function better(distance: number, similarity: number, otherDistance: number, otherSimilarity: number): boolean {
  return distance < otherDistance || (distance === otherDistance && similarity > otherSimilarity);
}
