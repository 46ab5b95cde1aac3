# Which language is a surname from? A character-level recurrent net reads the name one letter at a time (as the
# "Classifying names with a character-level RNN" tutorial does, with a handful of names per language written out
# below): each letter one-hot, an nn.RNN carries what it has read in its hidden state, and the last state is scored
# for each language. Backward runs back through every letter (backpropagation through time).
import torch
from torch import nn
from torch.nn import functional as F

NAMES = {
    "English": "smith jones taylor brown williams wilson johnson davies robinson wright thompson evans walker white "
               "roberts green hall wood jackson clarke",
    "Italian": "rossi russo ferrari esposito bianchi romano colombo ricci marino greco bruno gallo conti deluca "
               "mancini costa giordano rizzo lombardi moretti",
    "Japanese": "sato suzuki takahashi tanaka watanabe ito yamamoto nakamura kobayashi kato yoshida yamada sasaki "
                "yamaguchi matsumoto inoue kimura hayashi shimizu yamazaki",
    "German": "muller schmidt schneider fischer weber meyer wagner becker schulz hoffmann schafer koch bauer richter "
              "klein wolf schroder neumann schwarz zimmermann",
    "Polish": "nowak kowalski wisniewski wojcik kowalczyk kaminski lewandowski zielinski szymanski wozniak dabrowski "
              "kozlowski jankowski mazur kwiatkowski krawczyk piotrowski grabowski nowakowski pawlowski",
}
languages = list(NAMES)
letters = sorted(set("".join(NAMES.values()).replace(" ", "")))
pairs = [(name, i) for i, lang in enumerate(languages) for name in NAMES[lang].split()]


def one_hot(name):  # (letters in the name, 1, alphabet): a sequence of one batch
    return F.one_hot(torch.tensor([letters.index(c) for c in name]), len(letters)).float().unsqueeze(1)


class Classifier(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.rnn = nn.RNN(len(letters), hidden)
        self.out = nn.Linear(hidden, len(languages))

    def forward(self, x):
        _, h = self.rnn(x)  # h: the state after the last letter
        return self.out(h[0])


torch.manual_seed(0)
held_out = pairs[4::5]  # every fifth name is kept out of training, to see whether the net generalises
train = [p for p in pairs if p not in held_out]
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def accuracy(data):
    with torch.no_grad():
        return sum(model(one_hot(n)).argmax(1).item() == i for n, i in data) / len(data)


for epoch in range(12):
    order = torch.randperm(len(train)).tolist()
    total = 0.0
    for k in order:
        name, lang = train[k]
        loss = F.cross_entropy(model(one_hot(name)), torch.tensor([lang]))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: mean loss {total / len(train):.3f}, train accuracy {accuracy(train):.0%}, "
          f"held-out accuracy {accuracy(held_out):.0%}")

for name in ("tanaka", "ferraro", "kowalczyk", "schuster", "thomson"):
    with torch.no_grad():
        p = F.softmax(model(one_hot(name)), dim=1)[0]
    best = p.argmax().item()
    print(f"{name}: {languages[best]} ({p[best].item():.0%})")
